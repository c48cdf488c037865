"""Read and write a simvis shared-array region with the standard library only.

The layout is ipc/LAYOUT.md. Usage:

    python3 simvis_shm.py /dev/shm/simvis-NAME                 list elements
    python3 simvis_shm.py /dev/shm/simvis-NAME R_POSE.yaw       print a value
    python3 simvis_shm.py /dev/shm/simvis-NAME R_POSE.yaw=45    set a value
    python3 simvis_shm.py /dev/shm/simvis-NAME --log            print the change log

Change requests need an atomic compare-and-swap, which the standard library
does not offer; use `simvis request` or the Go client for them.

Every figure read from the region is checked before it is used (LAYOUT.md,
"Trust model"): another process may have written anything there.
"""

import mmap
import os
import struct
import sys
import time

MAGIC = b"SIMVIS1\0"


class Region:
    def __init__(self, path):
        # Never through a symbolic link, and only this user's file: anyone
        # may plant files in /dev/shm.
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        try:
            st = os.fstat(fd)
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

    def log(self):
        """The change log: (seq, source, dir, xml) for every command the host executed."""
        used, = struct.unpack_from("<Q", self.mem, 112)
        if used > self.log_cap or used % 8:
            raise ValueError(f"damaged region: log_used {used}, capacity {self.log_cap}")
        off, want = 0, 1
        while off < used:
            if used - off < 24:
                raise ValueError(f"damaged region: change log record at {off} is cut off")
            size, ls, ld, lt, seq = struct.unpack_from("<IIIIQ", self.mem, self.log_off + off)
            if size < 24 or size % 8 or off + size > used or 24 + ls + ld + lt > size or seq != want:
                raise ValueError(f"damaged region: change log record at {off} does not parse")
            p = self.log_off + off + 24
            source, folder, xml = (self.mem[a:b].decode() for a, b in
                                   ((p, p + ls), (p + ls, p + ls + ld), (p + ls + ld, p + ls + ld + lt)))
            yield seq, source, folder, xml
            off += size
            want += 1

    def elements(self):
        """A consistent list of (name, insert_at, type, start, [params])."""
        why = "descriptors kept changing"
        deadline = time.monotonic() + 2  # the host repairs damage every cycle
        while time.monotonic() < deadline:
            seq, = struct.unpack_from("<I", self.mem, 128)
            if seq % 2:
                why = f"desc_seq stays odd ({seq})"
                time.sleep(1e-4)
                continue
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
                names = self.mem[self.names_off + off:self.names_off + off + ln].split(b"\0")[:n]
                out.append((text(0, 96), text(96, 160), text(160, 192), start, [x.decode(errors="replace") for x in names]))
            if struct.unpack_from("<I", self.mem, 128)[0] != seq:
                continue
            if bad is None:
                return out
            why = bad
            time.sleep(1e-4)
        raise RuntimeError(f"damaged region: {why}")

    def index(self, element, param):
        """The value slot of element.param: look it up once, then use get/set."""
        for name, _, _, start, params in self.elements():
            if name == element:
                if param not in params:
                    raise KeyError(f"{element} has no parameter {param} (has {', '.join(params)})")
                return start + params.index(param)
        raise KeyError(f"no element {element}")

    def get(self, slot):
        if not 0 <= slot < self.values_cap:
            raise IndexError(f"value slot {slot} outside 0..{self.values_cap - 1}")
        return struct.unpack_from("<d", self.mem, self.values_off + 8 * slot)[0]

    def set(self, slot, value):
        if not 0 <= slot < self.values_cap:
            raise IndexError(f"value slot {slot} outside 0..{self.values_cap - 1}")
        struct.pack_into("<d", self.mem, self.values_off + 8 * slot, value)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    region = Region(argv[1])
    if region.state() != 1:
        print(f"{argv[1]}: the host is not running (state {region.state()})", file=sys.stderr)
        return 1
    if argv[2:] == ["--log"]:
        for seq, source, _, xml in region.log():
            print(f"{seq}\t{source}\t{xml}")
        return 0
    if len(argv) == 2:
        for name, at, typ, start, params in region.elements():
            print(f"{name} ({typ} at {at}) start {start}: " + " ".join(
                f"{p}={region.get(start + i):g}" for i, p in enumerate(params)))
        return 0
    for arg in argv[2:]:
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
