"""partition -> consumer: groups of every type, each with its protocol beside its assignors.

``classic`` (client-side assignors, the JoinGroup/SyncGroup protocol, custom assignors, adapters for real
consumers), ``consumer`` (KIP-848: the coordinator's assignors and protocol), ``share`` (KIP-932), ``streams``
(KIP-1071), and ``simulate``, which plays them over a timeline. Shared here: the scenario document, the flat
integer assignment, and the numbers people ask of an assignment."""
