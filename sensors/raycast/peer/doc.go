// Command peer is simvis's peer benchmark (make bench-peers): it casts the
// rays of simvis's range sensors with simvis's exact caster and with Intel
// Embree (Debian's libembree-dev, through the small C program in c/), on
// the same triangles, checks that the ranges agree and prints the ratios.
//
//	go run ./sensors/raycast/peer [-seconds S] [-rounds R] [-o DIR] [SCENE ...]
//
// Without scenes it writes the benchmark scenes (simvis bench --generate)
// into DIR and measures scenes/marvin, DIR/marvin50 and DIR/mesh1m. Per
// scene it casts two sets: every scanner's beams (laser, laser3d, psd: one
// cycle) and each depth camera's pixels, and prints two rows per set: on
// one thread, simvis's CastSerial sensor by sensor against Embree's
// rtcIntersect1 and its packets of 4 and 8 on one thread; on all cores
// (GOMAXPROCS threads), one CastBatch of the whole set, as a simulation
// cycle casts its sensors (checked to give CastSerial's very ranges),
// against the same three ways of Embree's, each pass over the rays split
// into chunks of 32 rays that as many threads take in turn (c/). /e1 is
// simvis's rate over rtcIntersect1's on as many threads, /best over the
// fastest of Embree's three.
//
// Each set is measured in R rounds (default 5), each measurement for at
// least S seconds (default 0.25) a way: on one thread, then on all cores,
// Embree's three ways, simvis's, simvis's again, Embree's again, each
// figure of a round the mean of its two. The rows hold the medians of the
// rounds' rates, and /e1 and /best the medians of the rounds' ratios, with
// the least and most of /e1 beside them: on a machine whose speed drifts
// from one minute to the next (a VM), a ratio of two figures measured
// seconds apart says much more than one of figures measured a minute
// apart; and where the measurement right after the other program's runs
// slower than one after its own, as on that VM, each program has one of
// each.
//
// The ray file handed to the C program is little-endian: the magic
// "SVRAYS01"; uint32 vertex, triangle and ray counts; the vertices (3
// float32 each, world coordinates); the triangles (3 uint32 vertex indices
// each); the rays (origin and unit direction, 6 float64 each). It writes
// one float64 range per ray (+Inf for none), says so in a JSON line, then
// answers each line "THREADS SECONDS" on its input with one JSON line of
// rays per second (see c/embree_peer.c).
package main
