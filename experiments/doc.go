// Package experiments runs experiment specs: a spec (Spec, LoadSpec) names
// traces, a server or cluster, policy configurations and sweeps; it
// compiles (Spec.Compile, LoadPlan) to a Plan, and RunPlan runs the plan's
// cells (each one run put together by experiments/assemble),
// shards and resumes them, and combines their results into tables,
// figures and provenance (Merge).
package experiments
