# simvis: the two commands a newcomer needs are `make demo` and `make test`.
# Both install the Debian packages the build needs first (as root, or with sudo).

GO       ?= go
SCENE    ?= scenes/quickstart/scene.xml
OUT      ?= out/quickstart
# g3n's renderer package pulls in GLFW's C sources, which need the X11 and GL
# headers at build time; EGL and Mesa's llvmpipe render headless at run time.
# iproute2 (ip netns) lets the multi-host tests put host and mirror on two
# network namespaces. python3-numpy (run as /usr/bin/python3) back-projects
# depth captures in the sensors tests as an independent reader; python3-opencv
# calibrates a distorted camera from its checkerboard images in the same way.
# xvfb and xdotool run and drive the viewer's window in tests; nats-server is a
# separately started server; libembree-dev builds the peer ray caster of
# `make bench-peers`. python3-dartpy (DART) reads URDF robots as an independent
# forward-kinematics reference; liburdfdom-tools has check_urdf; blender's own
# importers read the STL, OBJ and Collada meshes the models tests compare with
# (internal/blendertest). Debian's chromium opens the web viewer's page
# headless (WebGL by SwiftShader) in the web tests. Node and the npm packages in internal/jstest are the
# independent MCAP, ROS 2, Foxglove, glTF and NATS readers the tests run.
APT_PACKAGES := gcc pkg-config libegl-dev libegl-mesa0 libgl1-mesa-dri libgl1-mesa-dev \
	libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev libxxf86vm-dev iproute2 \
	python3-numpy python3-opencv xvfb xdotool xauth nats-server libembree-dev \
	python3-dartpy liburdfdom-tools blender chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test lint packages-doc cli-doc fuzz deps build install picture assets bench clean web-assets

# The first build of anything that draws compiles GLFW's C sources (cgo,
# pulled in by g3n's renderer): minutes during which go prints nothing, so
# say so, and list the packages as they compile.
COLD_BUILD = $(shell [ "$$($(GO) list -f '{{.Stale}}' github.com/go-gl/glfw/v3.3/glfw 2>/dev/null)" = true ] && echo yes)
COLD_MSG   := first build: go compiles GLFW's C sources (cgo) and every dependency; about 5 minutes on 2 cores, later builds take seconds
COLD_NOTE   = $(if $(COLD_BUILD),@echo "$(COLD_MSG)",@:)

demo: deps build
	./bin/simvis inspect $(SCENE)
	./bin/simvis capture $(SCENE) -o $(OUT)

# -timeout: the cli package's end-to-end tests take 6-8 minutes on a busy
# 2-core machine, too close to go test's default of 10 per package.
test: deps web-assets
	$(COLD_NOTE)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

# Code-health gates (CI runs them before the tests): gofmt leaves every file
# as it is, go vet and staticcheck find nothing, and no non-test Go file is
# over MAX_LINES lines. staticcheck is pinned here, run with
# `go run pkg@version`: a fresh machine fetches that exact version (checked
# against the Go checksum database) and builds it with the dependency
# versions of its own go.mod, while simvis's go.mod, which modules that use
# simvis read, stays free of it. Every check runs; any finding fails the
# target. `//lint:ignore CHECK reason` silences a finding where the
# check is wrong, saying why.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.6.1
MAX_LINES   := 800
GO_FILES     = $(shell find . \( -name node_modules -o -name '.?*' \) -prune -o -name '*.go' -print)
lint: deps
	$(COLD_NOTE)
	@status=0; \
	unformatted=$$($$($(GO) env GOROOT)/bin/gofmt -l $(GO_FILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted (gofmt -w FILE):"; echo "$$unformatted" | sed 's|^\./|  |'; status=1; fi; \
	echo "$(GO) vet ./..."; $(GO) vet ./... || status=1; \
	echo "$(GO) run $(STATICCHECK) ./..."; $(GO) run $(STATICCHECK) ./... || status=1; \
	long=$$(for f in $(GO_FILES); do case $$f in *_test.go) ;; *) n=$$(wc -l < $$f); \
		[ $$n -le $(MAX_LINES) ] || echo "  $${f#./}: $$n lines"; esac; done); \
	if [ -n "$$long" ]; then \
		echo "non-test Go files over $(MAX_LINES) lines: split each by concept, one file per concept, moving code unchanged"; \
		echo "$$long"; status=1; fi; \
	exit $$status

# docs/packages.md's generated section (layers, packages, imports, the
# dependency rules) from the code; internal/archtest's tests fail while it
# is stale or an import breaks a rule.
packages-doc:
	$(GO) generate ./internal/archtest

# docs/commands.md and docs/cli.md's command list from the command table;
# cli's TestCommandDocs fails while they are stale.
cli-doc:
	$(GO) test ./cli -run '^TestCommandDocs$$' -update-docs

# Every Go fuzz target for FUZZTIME each. `make test` already runs their
# committed seed corpora (testdata/fuzz) as ordinary tests; this explores
# further (minimizing a finding at most 20 runs: longer stalls the run). New
# findings land in testdata/fuzz and fail `make test` until fixed.
FUZZTIME ?= 30s
fuzz: deps
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 20x $$pkg || exit 1; \
		done; \
	done

# apt on this image sometimes loses a downloaded package between dpkg runs
# ("cannot access archive"): a second install finishes the job. Another apt
# (unattended-upgrades on a fresh machine) may hold its locks: install waits
# up to 10 minutes for dpkg's (DPkg::Lock::Timeout); update takes the lists'
# lock, which that option does not cover (apt 2.6), so APT_UPDATE retries it
# every 5 s for as long.
APT_INSTALL := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends
APT_UPDATE  := for i in $$(seq 120); do \
		out=$$($(SUDO) apt-get -o DPkg::Lock::Timeout=600 update -qq 2>&1) && break; \
		case "$$out" in *"Could not get lock"*) [ $$i -lt 120 ] || { echo "$$out" >&2; exit 1; }; \
			[ $$i -gt 1 ] || echo "waiting for another apt to release its lock (up to 10 minutes)"; sleep 5;; \
		*) echo "$$out" >&2; exit 1;; esac; \
	done
deps:
	@missing=$$(for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(APT_UPDATE); \
		$(APT_INSTALL) $$missing || $(APT_INSTALL) $$missing; \
	fi
	@# node may come from elsewhere than Debian (it bundles npm then): only
	@# a machine without either gets Debian's.
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		$(APT_UPDATE); \
		$(APT_INSTALL) nodejs npm || $(APT_INSTALL) nodejs npm; }
	@# The exact versions in package-lock.json, installed again only when it changes.
	@if [ ! internal/jstest/node_modules/.package-lock.json -nt internal/jstest/package-lock.json ]; then \
		cd internal/jstest && npm ci --no-audit --no-fund --loglevel=error || npm ci --no-audit --no-fund --loglevel=error; \
	fi

# The revision `simvis version` prints where Go's own VCS stamping is off.
REVISION := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)
LDFLAGS  := -X github.com/simvis/simvis/cli.revision=$(REVISION)

# The web viewer's browser program (web/browser compiled to WebAssembly)
# and Go's wasm_exec.js, generated into web/assets/static for the build to
# embed (docs/web.md). Not in git: made from the sources each time (about
# 45 s the first time, seconds once Go's cache has it).
web-assets:
	$(GO) generate ./web/assets

build: web-assets
	$(COLD_NOTE)
	$(GO) build $(if $(COLD_BUILD),-v) -ldflags "$(LDFLAGS)" -o bin/simvis ./cmd/simvis

# simvis on the PATH: go install puts it in $(go env GOBIN), or in
# $(go env GOPATH)/bin, which must be on the PATH.
install: deps web-assets
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/simvis
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; \
	case ":$$PATH:" in *":$$bin:"*) echo "installed $$bin/simvis";; \
	*) echo "installed $$bin/simvis; add $$bin to your PATH (export PATH=\"$$bin:\$$PATH\")";; esac

# The README's picture, drawn by simvis itself from the bundled showcase scene.
picture: build
	./bin/simvis view scenes/showcase/scene.xml -o docs/img/showcase.png --size 960x540

# Regenerate the example scenes' glTF assets from code.
assets:
	$(GO) run ./scenes/generate -o scenes

clean:
	rm -rf bin out

# The peer benchmark (not part of `make test`): simvis's exact caster and
# Intel Embree (libembree-dev, one thread, rtcIntersect1 and packets of 4
# and 8) cast the same rays of the MARVIN, 50-MARVIN and 1M-triangle scenes;
# ranges are checked to agree and the rates and ratios printed. See
# docs/performance.md.
.PHONY: bench-peers
bench-peers: deps
	$(GO) run ./sensors/raycast/peer -o out/bench-peers

# The GPU against the CPU caster in one table (scripts/gpu-check.sh): builds
# nothing, so build first (make build) and carry bin/ to the GPU machine;
# GPU_CHECK_FLAGS=--quick on llvmpipe.
.PHONY: gpu-check
gpu-check:
	scripts/gpu-check.sh $(GPU_CHECK_FLAGS)
