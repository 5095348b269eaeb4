// Package models is the simulator's truth: what the simulated hardware is
// and how the simulated jobs behave on it, measured or fitted from
// measurements. Policies never import it; they see a workload only as the
// policies.Profile it yields (Workload.PolicyProfile). It holds
//
//   - the workload catalog (Catalog, Workload): each workload's solo
//     per-GPU profile, memory estimates and Lucid class, embedded for
//     A100 40 GB (A100) and the legacy 11 GB GPU (Legacy11GB), or read
//     from a file (LoadCatalog, DeriveSourceCatalog);
//   - the hardware: GPU types (GPUType, LookupGPU, ResolveGPUType),
//     servers (Server, ParseServer) and clusters (Cluster, ParseCluster);
//   - the behaviour models the simulator draws its truth from:
//     interference between co-running jobs (Interference, PressureModel),
//     the telemetry a shared GPU shows (TelemetryParams), startup times
//     (Startup), and each memory input's answer (EstimateFor);
//   - the calibration of the interference model from measured co-runs
//     (ReadPairs, FitPressure, Calibrate) and its YAML file
//     (InterferenceFile);
//   - SharedDir, where the shared measurements are, for other packages'
//     input files too.
package models
