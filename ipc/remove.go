package ipc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simvis/simvis/scene"
)

// ErrRunRestarted is the outcome of a request the host took after a
// removal in the same cycle: the removal starts a new run (a new region,
// epoch and change log), so the request was not executed; sending it
// again reaches the new run.
var ErrRunRestarted = errors.New("the host restarted its run for a removal in this cycle; send the request again")

// remove takes a request <remove name="NAME"/>: the part, element or
// sensor NAME that the scene file or a request added goes, with every
// later command that depended on it (a sensor or part inserted inside a
// removed part). A scene only grows by commands, so the host builds a new
// run without them: a new region at the same path (a new epoch, the change
// log without the removed commands), which takes over at the end of the
// cycle. Clients find the old region marked replaced and open the new one,
// as after a restart; mirrors rebuild; values carry over by name. Its
// outcome's sequence is the new run's last change.
func (h *Host) remove(c *scene.Command) (uint64, error) {
	name, err := c.Required("name")
	if err != nil {
		return 0, err
	}
	for _, a := range c.Elem.Attr {
		if a.Key != "name" {
			return 0, c.Errorf(a.Key, "unknown attribute (remove takes name only)")
		}
	}
	if wait := h.opts.RemoveInterval; wait > 0 && !h.lastRemoval.IsZero() {
		if since := h.now().Sub(h.lastRemoval); since < wait {
			return 0, c.Errorf("", "removals are limited to one every %v (a removal reloads the whole scene); the last was %v ago: send it again later, or lower the limit (ipc.HostOptions.RemoveInterval, serve --remove-interval)",
				wait, since.Round(time.Millisecond))
		}
	}
	target := -1
	for i, rc := range h.run {
		if rc.cmd.Name() == name { // a removal is never in the run's log
			target = i
			break
		}
	}
	if target < 0 {
		_, frameErr := h.Scene.Frame(name)
		if _, isElement := h.Scene.Element(name); frameErr == nil || isElement {
			return 0, c.Errorf("name", "%q was added by a part's model, not by a command of its own: remove the part", name)
		}
		return 0, c.Errorf("name", "no part, element or sensor named %q", name)
	}
	keep := append(append([]ranCommand(nil), h.run[:target]...), h.run[target+1:]...)
	var dropped []error
	n, err := h.buildRun(h.Region.path, keep, &dropped)
	if err != nil {
		return 0, fmt.Errorf("removing %q: %w", name, err)
	}
	h.carryValues(n)
	// The new run takes the name before the requester reads its outcome:
	// whoever opens the name after that opens the new run.
	if err := n.Region.takeName(n.tmp); err != nil {
		return 0, fmt.Errorf("removing %q: %w", name, err)
	}
	h.next, h.lastRemoval = n, h.now()
	if len(dropped) > 0 {
		var why []string
		for _, err := range dropped {
			why = append(why, err.Error())
		}
		h.warn("remove", "removing %q also removed %d command(s) that depended on it: %s", name, len(dropped), strings.Join(why, "; "))
	}
	h.warn("remove-run", "removed %q: a new run of %d commands replaces the host's region (clients reopen it, mirrors rebuild)", name, len(n.run))
	return uint64(len(n.run)), nil
}

// carryValues gives the elements of run n that the current run has too
// their current values (checked by the new scene's elements) and
// publishes them in n's region.
func (h *Host) carryValues(n *Host) {
	tab := n.Scene.Values()
	for _, e := range n.Scene.Elements() {
		was, ok := h.Scene.Element(e.Name)
		if !ok || len(was.Params) != len(e.Params) {
			continue
		}
		for i, p := range e.Params {
			if was.Params[i].Name == p.Name {
				tab[e.Start+i] = h.Scene.Values()[was.Start+i]
			}
		}
	}
	n.Scene.Update() // a value the new element refuses is reset (OnRejected)
	n.known = 0      // publish them all again, as a command publishes its own
	n.pushNew()
}

// takeNext hands the host over to the run a removal built, at the end of
// the cycle; the old region is closed (it was marked replaced when the new
// one took its name).
func (h *Host) takeNext() {
	old := h.Region
	h.takeRun(h.next)
	h.next = nil
	old.Close()
}
