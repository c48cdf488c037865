package foxglove

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/coder/websocket"
)

// service is a change request a driver may call: one XML command of the
// service's kind (any kind for /simvis/request), executed by the host
// under the rules of every other client's requests.
type service struct {
	id         uint32
	name, kind string
}

// Request and response schemas of every service (JSON Schema, JSON
// encoding).
const (
	requestSchema  = `{"type":"object","title":"simvis.Request","properties":{"xml":{"type":"string","description":"one XML command, e.g. <part file=\"box.gltf\" name=\"BOX\" insert_at=\"ROOT\"/>; file paths inside the scene's directory"}},"required":["xml"]}`
	responseSchema = `{"type":"object","title":"simvis.RequestOutcome","properties":{"seq":{"type":"integer","description":"the command's change-log sequence number"}}}`
)

func (s *Server) addServices() {
	for _, sv := range []struct{ name, kind string }{
		{"/simvis/add_part", "part"}, {"/simvis/add_element", "element"},
		{"/simvis/add_sensor", "sensor"}, {"/simvis/request", ""},
	} {
		s.services = append(s.services, &service{id: uint32(len(s.services) + 1), name: sv.name, kind: sv.kind})
	}
}

func (sv *service) advert() map[string]any {
	def := func(name, schema string) map[string]any {
		return map[string]any{"encoding": "json", "schemaName": name, "schemaEncoding": "jsonschema", "schema": schema}
	}
	return map[string]any{"id": sv.id, "name": sv.name, "type": "simvis/srv/Request",
		"request": def("simvis.Request", requestSchema), "response": def("simvis.RequestOutcome", responseSchema),
		// Older clients read these instead.
		"requestSchema": requestSchema, "responseSchema": responseSchema}
}

type callRequest struct {
	c      *client
	svc    *service
	callID uint32
	xml    string
}

func (s *Server) failCall(c *client, svc, call uint32, msg string) {
	s.callsRefused.Add(1)
	c.sendJSON(map[string]any{"op": "serviceCallFailure", "serviceId": svc, "callId": call, "message": clip(msg)})
}

// callService checks a call and queues it for the call worker.
func (s *Server) callService(c *client, svcID, call uint32, enc string, payload []byte) {
	var sv *service
	s.mu.RLock()
	if svcID >= 1 && int(svcID) <= len(s.services) {
		sv = s.services[svcID-1]
	}
	s.mu.RUnlock()
	switch {
	case sv == nil:
		s.failCall(c, svcID, call, fmt.Sprintf("no service %d", svcID))
		return
	case c.role != RoleDriver:
		s.failCall(c, svcID, call, sv.name+": refused: a viewer token may only subscribe; connect with the driver token to call services")
		return
	case s.drv == nil:
		s.failCall(c, svcID, call, sv.name+": this server cannot drive the host")
		return
	case enc != "json":
		s.failCall(c, svcID, call, fmt.Sprintf("%s: encoding %q: the server takes json", sv.name, echo(enc)))
		return
	}
	var req struct {
		XML *string `json:"xml"`
	}
	if err := json.Unmarshal(payload, &req); err != nil || req.XML == nil {
		s.failCall(c, svcID, call, sv.name+`: want {"xml": "<COMMAND .../>"}`)
		return
	}
	if sv.kind != "" {
		if kind, err := commandKind(*req.XML); err != nil || kind != sv.kind {
			if err == nil {
				err = fmt.Errorf("a <%s> command", kind)
			}
			s.failCall(c, svcID, call, fmt.Sprintf("%s takes one <%s> command, not %s", sv.name, sv.kind, echo(err.Error())))
			return
		}
	}
	if n, ok := s.calls.push(c, callRequest{c: c, svc: sv, callID: call, xml: *req.XML}, s.opts.MaxPending); !ok {
		s.opts.Warn("foxglove-pending", "foxglove: %s: call refused: %d of its calls wait for the host, the budget per connection (--foxglove-max-pending)", c, n)
		s.failCall(c, svcID, call, fmt.Sprintf("%s: refused: %d calls of this connection wait for the host already, the budget per connection (raise it with --foxglove-max-pending)", sv.name, n))
	}
}

// commandKind returns the tag of the first element of an XML text.
func commandKind(text string) (string, error) {
	d := xml.NewDecoder(bytes.NewReader([]byte(text)))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", errors.New("an empty text")
		}
		if err != nil {
			return "", err
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local, nil
		}
	}
}

// callWorker runs calls one at a time through the driver, connections in
// turn: Request waits for the host's outcome (a cycle), never on the
// host's goroutine.
func (s *Server) callWorker() {
	defer s.wg.Done()
	s.calls.run(s.done, func(r callRequest) {
		seq, err := s.drv.Request(r.xml)
		if err != nil {
			s.failCall(r.c, r.svc.id, r.callID, fmt.Sprintf("%s: %v", r.svc.name, err))
			return
		}
		body, _ := json.Marshal(map[string]uint64{"seq": seq})
		msg := make([]byte, 13, 13+4+len(body))
		msg[0] = 3 // service call response
		binary.LittleEndian.PutUint32(msg[1:], r.svc.id)
		binary.LittleEndian.PutUint32(msg[5:], r.callID)
		binary.LittleEndian.PutUint32(msg[9:], 4)
		msg = append(append(msg, "json"...), body...)
		r.c.send(websocket.MessageBinary, msg)
	})
}
