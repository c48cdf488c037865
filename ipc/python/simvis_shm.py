"""Read and write a simvis shared-array region with the standard library only.

The layout is ipc/LAYOUT.md. Usage:

    python3 simvis_shm.py /dev/shm/simvis-NAME                 list elements
    python3 simvis_shm.py /dev/shm/simvis-NAME R_POSE.yaw       print a value
    python3 simvis_shm.py /dev/shm/simvis-NAME R_POSE.yaw=45    set a value
    python3 simvis_shm.py /dev/shm/simvis-NAME --log            print the change log

Change requests need an atomic compare-and-swap, which the standard library
does not offer; use `simvis request` or the Go client for them.
"""

import mmap
import struct
import sys
import time

MAGIC = b"SIMVIS1\0"


class Region:
    def __init__(self, path):
        with open(path, "r+b") as f:
            self.mem = mmap.mmap(f.fileno(), 0)
        if self.mem[:8] != MAGIC:
            raise ValueError(f"{path}: not a simvis region")
        version, = struct.unpack_from("<I", self.mem, 8)
        if version != 1:
            raise ValueError(f"{path}: layout version {version}, this script reads 1")
        self.desc_off, self.desc_cap, self.desc_size = struct.unpack_from("<QII", self.mem, 32)
        self.names_off, = struct.unpack_from("<Q", self.mem, 48)
        self.values_off, self.values_cap = struct.unpack_from("<QI", self.mem, 64)

    def epoch(self):
        return struct.unpack_from("<Q", self.mem, 16)[0]

    def state(self):
        """1 host running, 2 stopped, 3 replaced by a new host (open the name again)."""
        return struct.unpack_from("<I", self.mem, 28)[0]

    def log(self):
        """The change log: (seq, source, dir, xml) for every command the host executed."""
        log_off, log_cap, used = struct.unpack_from("<QQQ", self.mem, 96)
        off = 0
        while off < min(used, log_cap):
            size, ls, ld, lt, seq = struct.unpack_from("<IIIIQ", self.mem, log_off + off)
            p = log_off + off + 24
            source, folder, xml = (self.mem[a:b].decode() for a, b in
                                   ((p, p + ls), (p + ls, p + ls + ld), (p + ls + ld, p + ls + ld + lt)))
            yield seq, source, folder, xml
            off += size

    def elements(self):
        """A consistent list of (name, insert_at, type, start, [params])."""
        for _ in range(1000):
            seq, = struct.unpack_from("<I", self.mem, 128)
            if seq % 2:
                time.sleep(1e-6)
                continue
            count, = struct.unpack_from("<I", self.mem, 132)
            out = []
            for i in range(count):
                rec = self.desc_off + i * self.desc_size
                text = lambda a, b: self.mem[rec + a:rec + b].split(b"\0")[0].decode()
                start, n, off, ln = struct.unpack_from("<IIII", self.mem, rec + 192)
                names = self.mem[self.names_off + off:self.names_off + off + ln].split(b"\0")[:n]
                out.append((text(0, 96), text(96, 160), text(160, 192), start, [x.decode() for x in names]))
            if struct.unpack_from("<I", self.mem, 128)[0] == seq:
                return out
        raise RuntimeError("descriptors kept changing")

    def index(self, element, param):
        """The value slot of element.param: look it up once, then use get/set."""
        for name, _, _, start, params in self.elements():
            if name == element:
                if param not in params:
                    raise KeyError(f"{element} has no parameter {param} (has {', '.join(params)})")
                return start + params.index(param)
        raise KeyError(f"no element {element}")

    def get(self, slot):
        return struct.unpack_from("<d", self.mem, self.values_off + 8 * slot)[0]

    def set(self, slot, value):
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
