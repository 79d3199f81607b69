"""Shared helpers at the bottom of kassign: errors, bounds, units for people, Java's orderings and Random,
strict document reading, cluster metadata, and the chart and page helpers every report uses.

Nothing here imports from any other kassign package."""
