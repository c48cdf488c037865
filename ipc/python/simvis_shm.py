"""Read and write a simvis shared-array region with the standard library only.

The layout is ipc/LAYOUT.md. REGION is a host's name (`simvis serve --shm
NAME`, default "default": the file /dev/shm/simvis-NAME) or, holding a '/',
the region file's path. Usage:

    python3 simvis_shm.py [REGION]                 list elements
    python3 simvis_shm.py [REGION] R_POSE.yaw      print a value
    python3 simvis_shm.py [REGION] R_POSE.yaw=45   set a value (several may follow)
    python3 simvis_shm.py [REGION] --log           print the change log, a record a line
    python3 simvis_shm.py -h                       this text

Without REGION (or --shm REGION), the region is $SIMVIS_SHM, else "default",
as for the simvis commands. A first argument of the form ELEMENT.PARAM is a
value, not a region: give a region name holding a dot as --shm NAME.

Change requests need an atomic compare-and-swap, which the standard library
does not offer; use `simvis request` or the Go client for them.

Every figure read from the region is checked before it is used (LAYOUT.md,
"Trust model"): another process may have written anything there. A read that
finds damage retries for SIMVIS_SHM_PATIENCE seconds (default 2; the host
repairs what it owns every cycle), then fails. Every command fails, exit
status 1, when the host's process is gone; a bad command line exits with 2.
"""

import mmap
import os
import stat
import struct
import sys
import time

MAGIC = b"SIMVIS1\0"
# Seconds a read retries damage before reporting it: the host repairs what
# it owns every cycle.
PATIENCE = float(os.environ.get("SIMVIS_SHM_PATIENCE", "2"))


class Damaged(Exception):
    """What was read does not check out (yet): retried, then reported."""


class Region:
    def __init__(self, path):
        # Never through a symbolic link, and only this user's file: anyone
        # may plant files in /dev/shm.
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ValueError(f"{path}: not a regular file")
            if st.st_uid != os.getuid():
                raise ValueError(f"{path}: belongs to user {st.st_uid}, not to this user")
            self.mem = mmap.mmap(fd, 0)
        finally:
            os.close(fd)
        if self.mem[:8] != MAGIC:
            raise ValueError(f"{path}: not a simvis region")
        version, = struct.unpack_from("<I", self.mem, 8)
        if version != 1:
            raise ValueError(f"{path}: layout version {version}, this script reads 1")
        if self.epoch() == 0:
            raise ValueError(f"{path}: the host has not finished creating it")
        self.path = path
        # The layout is read once and checked against the file.
        self.desc_off, self.desc_cap, self.desc_size = struct.unpack_from("<QII", self.mem, 32)
        self.names_off, self.names_cap = struct.unpack_from("<QI", self.mem, 48)
        self.values_off, self.values_cap = struct.unpack_from("<QI", self.mem, 64)
        self.log_off, self.log_cap = struct.unpack_from("<QQ", self.mem, 96)
        size = len(self.mem)
        for name, off, n in (("descriptors", self.desc_off, self.desc_cap * 256), ("names", self.names_off, self.names_cap),
                             ("values", self.values_off, self.values_cap * 8), ("change log", self.log_off, self.log_cap)):
            if off % 4096 or off < 4096 or off + n > size:
                raise ValueError(f"{path}: {name} section [{off}, +{n}) is outside the {size}-byte file")
        if self.desc_size != 256:
            raise ValueError(f"{path}: descriptor size {self.desc_size}, want 256")

    def epoch(self):
        return struct.unpack_from("<Q", self.mem, 16)[0]

    def state(self):
        """1 host running, 2 stopped, 3 replaced by a new host (open the name again)."""
        return struct.unpack_from("<I", self.mem, 28)[0]

    def host_gone(self):
        """Why the host is not running, or None while it is: state 1 says
        nothing about a host that was killed, so look for its process."""
        state = self.state()
        if state == 2:
            return f"host {self.path} is not running (it stopped)"
        if state == 3:
            return f"host {self.path} was replaced by a new host: open the name again"
        pid, = struct.unpack_from("<I", self.mem, 24)
        try:
            if not 0 < pid <= 1 << 22:
                raise ProcessLookupError
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat", "rb") as f:  # killed, not yet reaped?
                if f.read().rpartition(b")")[2][1:2] in (b"Z", b"X"):
                    raise ProcessLookupError
        except ProcessLookupError:
            return f"host {self.path} is not running (pid {pid} gone)"
        except OSError:
            pass  # no /proc, or the process is another user's: it lives
        return None

    def _retry(self, read):
        """read() until it does not raise Damaged, for PATIENCE seconds."""
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                return read()
            except Damaged as why:
                if time.monotonic() > deadline or self.state() != 1:
                    raise RuntimeError(f"damaged region (still so after {PATIENCE} s): {why}") from None
                time.sleep(1e-4)

    def log(self):
        """The whole change log: [(seq, source, dir, xml)] for every command
        the host executed. Never a shorter log: damage is retried, then an
        error."""
        return self._retry(self._read_log)

    def _read_log(self):
        used, count = struct.unpack_from("<QQ", self.mem, 112)
        if used > self.log_cap or used % 8:
            raise Damaged(f"log_used {used}, capacity {self.log_cap}")
        out, off = [], 0
        while off < used:
            if used - off < 24:
                raise Damaged(f"change log record at {off} is cut off")
            size, ls, ld, lt, seq = struct.unpack_from("<IIIIQ", self.mem, self.log_off + off)
            if size < 24 or size % 8 or off + size > used or 24 + ls + ld + lt > size or seq != len(out) + 1:
                raise Damaged(f"change log record at {off} does not parse")
            p = self.log_off + off + 24
            source, folder, xml = (self.mem[a:b].decode(errors="replace") for a, b in
                                   ((p, p + ls), (p + ls, p + ls + ld), (p + ls + ld, p + ls + ld + lt)))
            out.append((seq, source, folder, xml))
            off += size
        if count < len(out):
            raise Damaged(f"log_count {count} is behind the {len(out)} records below log_used")
        # A record just past log_used: the host is publishing it, or the
        # counters were rewound. Either way, look again.
        if self.log_cap - used >= 24:
            size, = struct.unpack_from("<I", self.mem, self.log_off + used)
            seq, = struct.unpack_from("<Q", self.mem, self.log_off + used + 16)
            if size != 0 and seq == len(out) + 1:
                raise Damaged(f"record {seq} lies past log_used {used} (log_used and log_count rewound?)")
        return out

    def elements(self):
        """A consistent list of (name, insert_at, type, start, [params])."""
        return self._retry(self._read_elements)

    def _read_elements(self):
        while True:
            seq, = struct.unpack_from("<I", self.mem, 128)
            if seq % 2:
                raise Damaged(f"desc_seq stays odd ({seq})")
            count, used = struct.unpack_from("<II", self.mem, 132)
            out, bad = [], None
            if count > self.desc_cap or used > self.values_cap:
                bad = f"desc_count {count} or values_used {used} out of range"
                count = 0
            for i in range(count):
                rec = self.desc_off + i * self.desc_size
                text = lambda a, b: self.mem[rec + a:rec + b].split(b"\0")[0].decode(errors="replace")
                start, n, off, ln = struct.unpack_from("<IIII", self.mem, rec + 192)
                if off + ln > self.names_cap or start + n > used:
                    bad = f"descriptor {i} out of range"
                    break
                blob = self.mem[self.names_off + off:self.names_off + off + ln]
                names = blob[:-1].split(b"\0") if blob.endswith(b"\0") else []
                if len(names) != n:
                    bad = f"descriptor {i}: {len(names)} NUL-terminated parameter names for {n} values"
                    break
                out.append((text(0, 96), text(96, 160), text(160, 192), start, [x.decode(errors="replace") for x in names]))
            if bad is None and count < self.desc_cap and self.mem[self.desc_off + count * self.desc_size] != 0:
                bad = f"a descriptor record lies past desc_count {count} (desc_count rewound?)"
            if struct.unpack_from("<I", self.mem, 128)[0] != seq:
                continue  # torn: the host was writing
            if bad is not None:
                raise Damaged(bad)
            return out

    def index(self, element, param):
        """The value slot of element.param: look it up once, then use get/set."""
        for name, _, _, start, params in self.elements():
            if name == element:
                if param not in params:
                    raise Unknown(f"{element} has no parameter {param} (has {', '.join(params)})")
                return start + params.index(param)
        names = [e[0] for e in self.elements()]
        raise Unknown(f"no element {element} (have {', '.join(names) or 'none'})")

    def get(self, slot):
        if not 0 <= slot < self.values_cap:
            raise IndexError(f"value slot {slot} outside 0..{self.values_cap - 1}")
        return struct.unpack_from("<d", self.mem, self.values_off + 8 * slot)[0]

    def set(self, slot, value):
        if not 0 <= slot < self.values_cap:
            raise IndexError(f"value slot {slot} outside 0..{self.values_cap - 1}")
        struct.pack_into("<d", self.mem, self.values_off + 8 * slot, value)


class Unknown(LookupError):
    """A name the region does not hold (an element or a parameter)."""

    def __str__(self):
        return self.args[0]


class Usage(Exception):
    """A bad command line: exit status 2 and the usage."""


def region_path(name):
    """Where the region named name lives, as the Go client finds it: a name
    holding a '/' is a path, any other is /dev/shm/simvis-NAME."""
    return name if "/" in name else "/dev/shm/simvis-" + name


def main(argv):
    try:
        if any(a in ("-h", "--help", "help") for a in argv[1:]):
            print(__doc__.strip())
            return 0
        return run(argv)
    except Usage as e:
        print(f"simvis_shm.py: {e} (run with -h for the usage)", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"no region {e.filename}: is `simvis serve` running with that --shm?", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # any other failure is reported, never a traceback
        print(f"simvis_shm.py: {e}", file=sys.stderr)
        return 1


def split_region(argv):
    """The region named on the command line (or the default) and the
    arguments after it."""
    args = argv[1:]
    if args[:1] == ["--shm"]:
        if len(args) < 2:
            raise Usage("--shm needs a region name or path")
        return args[1], args[2:]
    if args and not args[0].startswith("-") and "=" not in args[0] and ("/" in args[0] or "." not in args[0]):
        return args[0], args[1:]
    return os.environ.get("SIMVIS_SHM") or "default", args


def run(argv):
    name, args = split_region(argv)
    if "--log" in args and args != ["--log"]:
        raise Usage("--log takes no other arguments")
    for arg in args:
        if arg == "--log":
            continue
        if arg.startswith("-"):
            raise Usage(f"unknown option {arg}")
        target, eq, value = arg.partition("=")
        element, _, param = target.rpartition(".")
        if not element or not param or (eq and not value):
            raise Usage(f"{arg!r}: want ELEMENT.PARAM or ELEMENT.PARAM=VALUE")
        if eq:
            try:
                v = float(value)
            except ValueError:
                v = float("nan")
            if v != v or v in (float("inf"), float("-inf")):
                raise Usage(f"{arg}: {value!r} is not a finite number")
    region = Region(region_path(name))
    gone = region.host_gone()
    if gone:
        print(gone, file=sys.stderr)
        return 1
    if args == ["--log"]:
        # One record a line, as `simvis log` prints it: a command spanning
        # lines in its scene file is joined with spaces.
        for seq, source, _, xml in region.log():
            print(f"{seq}\t{source}\t{xml.replace(chr(10), ' ')}")
        return 0
    if not args:
        for name, at, typ, start, params in region.elements():
            print(f"{name} ({typ} at {at}) start {start}: " + " ".join(
                f"{p}={region.get(start + i):g}" for i, p in enumerate(params)))
        return 0
    for arg in args:
        target, _, value = arg.partition("=")
        element, _, param = target.rpartition(".")
        slot = region.index(element, param)
        if value:
            region.set(slot, float(value))
        else:
            print(region.get(slot))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
