// Package secretcmp compares the secrets clients present (NATS passwords and
// tokens, Foxglove tokens) with the configured ones, so that both
// transports check them the same way.
package secretcmp
