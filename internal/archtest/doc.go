// Package archtest draws docs/packages.md's generated section (the
// packages, what each is, what it imports) from the code, and holds the
// dependency rules the design keeps (rules.go). Its tests fail when the
// section is stale, printing the text it should hold, and when an import
// breaks a rule.
//
// Rewrite the section with `make packages-doc`, which runs go generate.
package archtest

//go:generate go test . -run TestPackagesDoc -update
