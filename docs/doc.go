// Package docs keeps the measured tables of README.md and docs/*.md honest:
// its test regenerates every block between <!-- begin:NAME --> and
// <!-- end:NAME --> markers from the runs that produce it, and fails when a
// page shows numbers the code no longer gives. `make docs-tables` (go test
// ./docs -update) rewrites the blocks.
package docs
