// Package testkit holds what simvis's tests in several packages need alike:
// one shared offscreen renderer, model and scene files written on the fly,
// PNG reading and comparison, world poses. Only tests import it.
package testkit
