// simvis web viewer: starts the browser program (simvis.wasm, Go compiled
// to WebAssembly) after giving it an in-memory file system. The program
// mirrors the host with the same code as a desktop mirror, which keeps the
// model files it fetches in a directory; Go's js/wasm port reaches files
// through globalThis.fs with the calls of Node's fs module, which a
// browser lacks, so this file provides them over memory. Nothing is
// stored on the viewing machine: a reload starts afresh.
"use strict";

(function () {
  const S_IFDIR = 0o040000, S_IFREG = 0o100000;
  const O = { O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024, O_DIRECTORY: 65536 };
  const nodes = new Map(); // absolute path -> {dir, data, size, mode, mtime, ino}
  const fds = new Map();   // fd -> {path, pos, append}
  let nextFD = 10, nextIno = 1;
  const decoder = new TextDecoder("utf-8");
  let outLine = ["", ""];

  function fail(code) { const e = new Error(code); e.code = code; return e; }
  function norm(p) {
    const out = [];
    for (const part of String(p).split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") out.pop(); else out.push(part);
    }
    return "/" + out.join("/");
  }
  function parent(p) { const i = p.lastIndexOf("/"); return i <= 0 ? "/" : p.slice(0, i); }
  function mk(dir, mode) {
    return { dir, data: new Uint8Array(0), size: 0, mode: (dir ? S_IFDIR : S_IFREG) | (mode & 0o777), mtime: Date.now(), ino: nextIno++ };
  }
  nodes.set("/", mk(true, 0o755));
  nodes.set("/tmp", mk(true, 0o777));
  function stat(n) {
    return { dev: 1, ino: n.ino, mode: n.mode, nlink: 1, uid: 0, gid: 0, rdev: 0, size: n.size, blksize: 4096,
      blocks: Math.ceil(n.size / 512), atimeMs: n.mtime, mtimeMs: n.mtime, ctimeMs: n.mtime,
      isDirectory() { return n.dir; } };
  }
  function children(p) {
    const pre = p === "/" ? "/" : p + "/";
    const names = [];
    for (const k of nodes.keys()) {
      if (k !== p && k.startsWith(pre) && !k.slice(pre.length).includes("/")) names.push(k.slice(pre.length));
    }
    return names;
  }
  function grow(n, need) {
    if (need <= n.data.length) return;
    const d = new Uint8Array(Math.max(need, n.data.length * 2, 4096));
    d.set(n.data.subarray(0, n.size));
    n.data = d;
  }
  function call(cb, fn) {
    let r;
    try { r = fn(); } catch (e) { cb(e.code ? e : fail("EIO")); return; }
    cb(null, r);
  }
  function node(p) { const n = nodes.get(norm(p)); if (!n) throw fail("ENOENT"); return n; }
  function writeOut(fd, buf) {
    outLine[fd - 1] += decoder.decode(buf);
    const nl = outLine[fd - 1].lastIndexOf("\n");
    if (nl !== -1) {
      (fd === 2 ? console.error : console.log)(outLine[fd - 1].slice(0, nl));
      outLine[fd - 1] = outLine[fd - 1].slice(nl + 1);
    }
    return buf.length;
  }

  globalThis.fs = {
    constants: O,
    writeSync(fd, buf) { return writeOut(fd, buf); },
    open(path, flags, mode, cb) {
      call(cb, () => {
        const p = norm(path);
        let n = nodes.get(p);
        if (n && (flags & O.O_CREAT) && (flags & O.O_EXCL)) throw fail("EEXIST");
        if (!n) {
          if (!(flags & O.O_CREAT)) throw fail("ENOENT");
          const dir = nodes.get(parent(p));
          if (!dir) throw fail("ENOENT");
          if (!dir.dir) throw fail("ENOTDIR");
          n = mk(false, mode);
          nodes.set(p, n);
        }
        if ((flags & O.O_DIRECTORY) && !n.dir) throw fail("ENOTDIR");
        if (n.dir && (flags & (O.O_WRONLY | O.O_RDWR))) throw fail("EISDIR");
        if (flags & O.O_TRUNC) { n.size = 0; n.mtime = Date.now(); }
        const fd = nextFD++;
        fds.set(fd, { path: p, pos: 0, append: !!(flags & O.O_APPEND) });
        return fd;
      });
    },
    close(fd, cb) { call(cb, () => { if (!fds.delete(fd)) throw fail("EBADF"); }); },
    fstat(fd, cb) { call(cb, () => { const f = fds.get(fd); if (!f) throw fail("EBADF"); return stat(node(f.path)); }); },
    stat(path, cb) { call(cb, () => stat(node(path))); },
    lstat(path, cb) { call(cb, () => stat(node(path))); },
    read(fd, buf, off, len, pos, cb) {
      call(cb, () => {
        const f = fds.get(fd); if (!f) throw fail("EBADF");
        const n = node(f.path); if (n.dir) throw fail("EISDIR");
        const at = pos === null ? f.pos : pos;
        const k = Math.max(0, Math.min(len, n.size - at));
        buf.set(n.data.subarray(at, at + k), off);
        if (pos === null) f.pos += k;
        return k;
      });
    },
    write(fd, buf, off, len, pos, cb) {
      if (fd === 1 || fd === 2) { call(cb, () => writeOut(fd, buf.subarray(off, off + len))); return; }
      call(cb, () => {
        const f = fds.get(fd); if (!f) throw fail("EBADF");
        const n = node(f.path); if (n.dir) throw fail("EISDIR");
        let at = pos === null ? f.pos : pos;
        if (f.append) at = n.size;
        grow(n, at + len);
        n.data.set(buf.subarray(off, off + len), at);
        n.size = Math.max(n.size, at + len);
        n.mtime = Date.now();
        if (pos === null) f.pos = at + len;
        return len;
      });
    },
    mkdir(path, perm, cb) {
      call(cb, () => {
        const p = norm(path);
        if (nodes.has(p)) throw fail("EEXIST");
        const dir = nodes.get(parent(p));
        if (!dir) throw fail("ENOENT");
        if (!dir.dir) throw fail("ENOTDIR");
        nodes.set(p, mk(true, perm));
      });
    },
    readdir(path, cb) { call(cb, () => { const p = norm(path); if (!node(p).dir) throw fail("ENOTDIR"); return children(p); }); },
    unlink(path, cb) { call(cb, () => { const p = norm(path); if (node(p).dir) throw fail("EISDIR"); nodes.delete(p); }); },
    rmdir(path, cb) {
      call(cb, () => {
        const p = norm(path);
        if (!node(p).dir) throw fail("ENOTDIR");
        if (children(p).length) throw fail("ENOTEMPTY");
        nodes.delete(p);
      });
    },
    rename(from, to, cb) {
      call(cb, () => {
        const a = norm(from), b = norm(to);
        node(a);
        if (!nodes.has(parent(b))) throw fail("ENOENT");
        for (const k of [...nodes.keys()]) {
          if (k === a || k.startsWith(a + "/")) { const n = nodes.get(k); nodes.delete(k); nodes.set(b + k.slice(a.length), n); }
        }
      });
    },
    readlink(path, cb) { call(cb, () => { node(path); throw fail("EINVAL"); }); },
    ftruncate(fd, len, cb) { call(cb, () => { const f = fds.get(fd); if (!f) throw fail("EBADF"); const n = node(f.path); grow(n, len); n.size = len; }); },
    truncate(path, len, cb) { call(cb, () => { const n = node(path); grow(n, len); n.size = len; }); },
    fsync(fd, cb) { cb(null); },
    chmod(path, mode, cb) { call(cb, () => { const n = node(path); n.mode = (n.mode & ~0o777) | (mode & 0o777); }); },
    fchmod(fd, mode, cb) { cb(null); },
    chown(path, u, g, cb) { cb(null); },
    fchown(fd, u, g, cb) { cb(null); },
    lchown(path, u, g, cb) { cb(null); },
    utimes(path, a, m, cb) { call(cb, () => { node(path).mtime = m * 1000; }); },
    link(a, b, cb) { cb(fail("ENOSYS")); },
    symlink(a, b, cb) { cb(fail("ENOSYS")); },
  };
  globalThis.process = {
    getuid() { return 0; }, getgid() { return 0; }, geteuid() { return 0; }, getegid() { return 0; },
    getgroups() { return []; }, pid: 1, ppid: 0, umask() { return 0o022; },
    cwd() { return "/"; }, chdir() { throw fail("ENOSYS"); },
  };

  function showError(text) {
    const e = document.getElementById("error");
    e.textContent = text;
    e.hidden = false;
  }
  globalThis.simvisShowError = showError;

  const glue = document.createElement("script");
  glue.src = "wasm_exec.js";
  glue.onerror = () => showError("simvis: wasm_exec.js is missing: this simvis was built without the browser program (make builds it).");
  glue.onload = async () => {
    const go = new Go();
    go.env = { TMPDIR: "/tmp", HOME: "/" };
    try {
      const resp = await fetch("simvis.wasm");
      if (!resp.ok) throw new Error(await resp.text());
      const { instance } = await WebAssembly.instantiateStreaming(resp, go.importObject);
      document.getElementById("status").textContent = "connecting...";
      await go.run(instance);
      showError("simvis: the viewer program ended (reload the page)");
    } catch (e) {
      showError("simvis: " + e.message);
      console.error(e);
    }
  };
  document.head.appendChild(glue);
})();
