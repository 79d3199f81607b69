"""The classic consumer group: client-side assignors chosen by ``partition.assignment.strategy`` (and users'
own), the JoinGroup/SyncGroup rebalance protocol in process, and kassign's assignors inside real consumers."""
