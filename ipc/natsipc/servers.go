package natsipc

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc"
)

// Servers splits a URL naming several servers of one cluster, separated by
// commas, into one URL per server, for nats.Connect (which takes them
// joined by commas) and for messages:
//
//	nats://USER:PASSWORD@HOST1:4222,HOST2:4222,HOST3:4222/NAME
//	nats://USER:PASSWORD@HOST1:4222/NAME,nats://USER:PASSWORD@HOST2:4222/NAME
//
// A server without a scheme takes the first one's; one without credentials
// takes the first one's (NATS clients otherwise log in to it without
// any). name is the path, "" if none; servers that name one must agree.
// The one parameter a URL may have, ?domain=D (Domain), is for clients.
// The servers returned carry no path or parameter. Errors never repeat
// the URL, which may hold a password.
func Servers(raw string) (servers []*url.URL, name string, err error) {
	servers, name, _, err = parseServers(raw)
	return servers, name, err
}

// Domain is the JetStream domain a client's URL names (?domain=D, after
// any of its servers), "" if none: where the host's change log is kept
// when that is not the JetStream of the client's own servers. A host on a
// robot whose nats-server is a leaf node with JetStream domain D keeps
// its log there; a client on the cluster reaches it through D's API
// ($JS.D.API), across the leaf node's link (docs/nats.md, "Leaf nodes").
func Domain(raw string) (string, error) {
	_, _, domain, err := parseServers(raw)
	return domain, err
}

func parseServers(raw string) (servers []*url.URL, name, domain string, err error) {
	var first *url.URL
	for i, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if first != nil && !strings.Contains(part, "://") {
			part = first.Scheme + "://" + part
		}
		u, err := ipc.ParseURL(part)
		if err != nil {
			return nil, "", "", fmt.Errorf("server %d of the URL: %w", i+1, err)
		}
		if u.Scheme == "" || u.Host == "" {
			return nil, "", "", fmt.Errorf("server %d of the URL: want SCHEME://HOST:PORT", i+1)
		}
		if first != nil && u.Scheme != first.Scheme {
			return nil, "", "", fmt.Errorf("server %d of the URL: scheme %s, the first one's is %s", i+1, u.Scheme, first.Scheme)
		}
		if p := strings.Trim(u.Path, "/"); p != "" {
			if name != "" && p != name {
				return nil, "", "", fmt.Errorf("the URL names two scenes, %q and %q", name, p)
			}
			name = p
		}
		if u.RawQuery != "" {
			q, err := url.ParseQuery(u.RawQuery)
			if err != nil {
				return nil, "", "", fmt.Errorf("server %d of the URL: its parameters do not parse", i+1)
			}
			for k, v := range q {
				if k != "domain" || len(v) != 1 || !validName(v[0]) || domain != "" && v[0] != domain {
					return nil, "", "", fmt.Errorf("server %d of the URL: parameter %q: the one a URL may have is domain=D, once, D made of letters, digits, '_' and '-'", i+1, k)
				}
				domain = v[0]
			}
		}
		u.Path, u.RawPath, u.RawQuery, u.ForceQuery = "", "", "", false
		if first == nil {
			first = u
		} else if u.User == nil {
			u.User = first.User
		}
		servers = append(servers, u)
	}
	if len(servers) == 0 {
		return nil, "", "", errors.New("the URL names no server")
	}
	return servers, name, domain, nil
}

// joinServers is the form nats.Connect takes.
func joinServers(servers []*url.URL) string {
	s := make([]string, len(servers))
	for i, u := range servers {
		s[i] = u.String()
	}
	return strings.Join(s, ",")
}

// redactServers names the servers for messages, without credentials.
func redactServers(servers []*url.URL) string {
	s := make([]string, len(servers))
	for i, u := range servers {
		s[i] = redact(u)
	}
	return strings.Join(s, ",")
}

// ClientURL is the URL clients of scene name use to reach it through the
// servers of raw (a host's --nats), without credentials:
// nats://HOST1:4222,HOST2:4222/NAME.
func ClientURL(raw, name string) (string, error) {
	servers, _, err := Servers(raw)
	if err != nil {
		return "", err
	}
	hosts := make([]string, len(servers))
	for i, u := range servers {
		hosts[i] = u.Host
	}
	return servers[0].Scheme + "://" + strings.Join(hosts, ",") + "/" + name, nil
}

// Failover is how NATS connections of simvis hosts and clients behave when
// their server goes away: they reconnect for ever, to the next server of
// their URL list or of the servers the cluster advertises (NATS's INFO
// connect_urls), a quarter second apart, and notice a server that stopped
// answering without closing the connection (a cut link) within about 15 s
// (a ping every 5 s, two unanswered).
func Failover() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.PingInterval(5 * time.Second), nats.MaxPingsOutstanding(2),
		nats.Timeout(5 * time.Second),
	}
}

// ConnectHost connects a host to the NATS server or cluster at raw (one
// URL or several separated by commas, Servers) with the failover
// behaviour of Failover.
func ConnectHost(raw, name string, opts ...nats.Option) (*nats.Conn, error) {
	servers, _, domain, err := parseServers(raw)
	if err != nil {
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	if domain != "" {
		return nil, fmt.Errorf("natsipc: the host's URL names JetStream domain %q: a host keeps its change log in the JetStream of its own server (on a robot, its leaf node's domain); domain=D is for clients elsewhere", domain)
	}
	opts = append(append([]nats.Option{nats.Name("simvis host " + name)}, Failover()...), opts...)
	nc, err := nats.Connect(joinServers(servers), opts...)
	if err != nil {
		return nil, fmt.Errorf("natsipc: connecting to %s: %w", redactServers(servers), err)
	}
	return nc, nil
}
