"""The stack config model and the facts it is checked against: the accelerator catalog, machine
sizes, label syntax, maintenance windows and GKE's create-time rules, each with its source."""
