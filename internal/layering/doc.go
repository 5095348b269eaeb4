// Package layering holds the import rules of the whole tree: which package
// may import which, written once as a table (rules, in layering_test.go)
// and checked by go test, so a change that breaks the layering fails CI.
// docs/layering.md draws the layers and says why.
package layering
