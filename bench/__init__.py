"""`make bench`: offline plan and check of synthetic 10/50/200-team platforms against the SDK floor."""
