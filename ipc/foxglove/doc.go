// Package foxglove serves a running scene to Foxglove (and its
// open-source forks) over the Foxglove WebSocket protocol, subprotocol
// foxglove.websocket.v1: a transport at the edge, like ipc/natsipc, that
// drives the host only through the ipc client API.
//
//   - Server speaks the protocol: serverInfo, advertised channels, binary
//     message data, parameters, services, roles (viewer and driver
//     tokens) and bounded per-client queues where a slow client loses
//     frames (the latest wins per channel) and never stalls the host.
//   - Publisher runs on the goroutine that owns a scene (a host's cycle
//     hook, a mirror's loop): it publishes the scene as foxglove.SceneUpdate,
//     the values, and element parameters as Foxglove parameters named
//     ELEMENT.PARAM; parameter writes and change requests from drivers go
//     to the host through a Driver (an *ipc.Client).
//
// Sensor frames and transforms are encoded elsewhere (sensors/ros2) and
// published on channels the caller advertises; this package knows no
// sensor. docs/foxglove.md is the user's reference.
package foxglove
