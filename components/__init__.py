"""The platform's Pulumi components, one per module. They only declare: every decision is made by
gke_ai_batch.plan (pure functions) from validated arguments.

Public, with plain arguments (also served to other Pulumi languages, see provider/): GkeCluster,
SystemNodePool, TpuSlicePool, GpuPool, CpuPool and KueueLayer; Platform takes a whole stack config.
KueueInstall, JobSetInstall, KueueQueues, Priorities, KueueMonitoring and Team are the KueueLayer's
parts; ClusterNetwork is GkeCluster's; TeamStorage, and a fleet manager's FleetManager with a FleetWorker
per worker, are the Platform's."""
