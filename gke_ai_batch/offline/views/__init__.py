"""What a person reads: the plan summary, report.html, the queue graph, the rendered outputs and the offline
policy check."""
