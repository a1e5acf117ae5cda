// The program's file system and process for Go's js/wasm port (see fs.go):
// files under the served root read through the runner, an in-memory tree
// under config.tmp (the program's TMPDIR) for writing, standard output and error sent to the runner.
// config (args, env, cwd) is defined before this script.
"use strict";
(() => {
	const S_IFDIR = 0o040000, S_IFREG = 0o100000;
	const err = (code) => { const e = new Error(code); e.code = code; return e; };

	// Output: numbered chunks, since fetches may arrive out of order.
	let seq = 0;
	const sent = [];
	globalThis.outputSent = sent;
	globalThis.outputChunks = () => seq;
	const send = (fd, bytes) => {
		sent.push(fetch("/out?fd=" + fd + "&seq=" + (seq++), {method: "POST", body: bytes}));
	};

	const clean = (p) => {
		if (!p.startsWith("/")) p = config.cwd + "/" + p;
		const out = [];
		for (const part of p.split("/")) {
			if (part === "" || part === ".") continue;
			if (part === "..") out.pop(); else out.push(part);
		}
		return "/" + out.join("/");
	};
	const parent = (p) => p.slice(0, p.lastIndexOf("/")) || "/";
	const base = (p) => p.slice(p.lastIndexOf("/") + 1);

	// mem holds the writable tree: path -> {dir, data, size, mode, mtimeMs}.
	const mem = new Map();
	const now = () => Date.now();
	const tmp = config.tmp;
	mem.set(tmp, {dir: true, mode: 0o777, mtimeMs: now()});
	const inMem = (p) => p === tmp || p.startsWith(tmp + "/");

	const stats = (e) => ({
		dev: 0, ino: 0, nlink: 1, uid: 0, gid: 0, rdev: 0, blksize: 4096,
		mode: (e.dir ? S_IFDIR : S_IFREG) | (e.mode & 0o777),
		size: e.dir ? 0 : (e.data ? e.size : e.fileSize || 0),
		blocks: 0, atimeMs: e.mtimeMs, mtimeMs: e.mtimeMs, ctimeMs: e.mtimeMs,
		isDirectory: () => !!e.dir,
	});

	// lookup finds path's entry: in mem, or on the runner's side.
	const lookup = async (p) => {
		if (inMem(p)) {
			const e = mem.get(p);
			if (!e) throw err("ENOENT");
			return e;
		}
		const r = await fetch("/fs/stat?path=" + encodeURIComponent(p));
		if (!r.ok) throw err("ENOENT");
		const st = await r.json();
		return {dir: st.dir, fileSize: st.size, mode: st.mode, mtimeMs: st.mtimeMs, remote: true};
	};
	const listing = async (p) => {
		if (inMem(p)) {
			const e = mem.get(p);
			if (!e) throw err("ENOENT");
			if (!e.dir) throw err("ENOTDIR");
			const names = [];
			for (const k of mem.keys()) if (k !== p && parent(k) === p) names.push(base(k));
			return names;
		}
		const r = await fetch("/fs/readdir?path=" + encodeURIComponent(p));
		if (!r.ok) throw err("ENOENT");
		return await r.json();
	};

	const fds = new Map();
	let nextFD = 100;
	const async = (cb, f) => { f().then((v) => cb(null, v), (e) => cb(e.code ? e : err("EIO"))); };

	globalThis.fs = {
		constants: {O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024, O_DIRECTORY: 65536},
		writeSync(fd, buf) {
			if (fd === 1 || fd === 2) {
				send(fd, buf.slice());
				return buf.length;
			}
			throw err("EBADF");
		},
		write(fd, buf, offset, length, position, cb) {
			if (fd === 1 || fd === 2) {
				send(fd, buf.slice(offset, offset + length));
				cb(null, length);
				return;
			}
			const f = fds.get(fd);
			if (!f || !f.writable) { cb(err("EBADF")); return; }
			const e = f.entry;
			let at = position !== null ? position : (f.append ? e.size : f.pos);
			const end = at + length;
			if (end > e.data.length) {
				const grown = new Uint8Array(Math.max(end, 2 * e.data.length));
				grown.set(e.data.subarray(0, e.size));
				e.data = grown;
			}
			e.data.set(buf.subarray(offset, offset + length), at);
			e.size = Math.max(e.size, end);
			e.mtimeMs = now();
			if (position === null) f.pos = end;
			cb(null, length);
		},
		read(fd, buf, offset, length, position, cb) {
			const f = fds.get(fd);
			if (!f || f.entry.dir) { cb(err(f ? "EISDIR" : "EBADF")); return; }
			const e = f.entry;
			const at = position !== null ? position : f.pos;
			const n = Math.max(0, Math.min(length, e.size - at));
			buf.set(e.data.subarray(at, at + n), offset);
			if (position === null) f.pos = at + n;
			cb(null, n);
		},
		open(path, flags, mode, cb) {
			async(cb, async () => {
				const p = clean(path);
				const writing = (flags & (1 | 2 | 64 | 512 | 1024)) !== 0;
				let e;
				if (inMem(p)) {
					e = mem.get(p);
					if (e && (flags & 64) && (flags & 128)) throw err("EEXIST");
					if (!e) {
						if (!(flags & 64)) throw err("ENOENT");
						const dir = mem.get(parent(p));
						if (!dir || !dir.dir) throw err("ENOENT");
						e = {dir: false, data: new Uint8Array(0), size: 0, mode: mode, mtimeMs: now()};
						mem.set(p, e);
					}
					if (e.dir && writing) throw err("EISDIR");
					if (flags & 512) e.size = 0;
				} else {
					if (writing) throw err("EROFS");
					e = await lookup(p);
					if (!e.dir) {
						const r = await fetch("/fs/file?path=" + encodeURIComponent(p));
						if (!r.ok) throw err("ENOENT");
						e.data = new Uint8Array(await r.arrayBuffer());
						e.size = e.data.length;
					}
				}
				if ((flags & 65536) && !e.dir) throw err("ENOTDIR");
				const fd = nextFD++;
				fds.set(fd, {entry: e, pos: 0, writable: writing, append: (flags & 1024) !== 0});
				return fd;
			});
		},
		close(fd, cb) { if (!fds.delete(fd)) { cb(err("EBADF")); return; } cb(null); },
		fstat(fd, cb) { const f = fds.get(fd); if (!f) { cb(err("EBADF")); return; } cb(null, stats(f.entry)); },
		stat(path, cb) { async(cb, async () => stats(await lookup(clean(path)))); },
		lstat(path, cb) { async(cb, async () => stats(await lookup(clean(path)))); },
		readdir(path, cb) { async(cb, () => listing(clean(path))); },
		mkdir(path, perm, cb) {
			const p = clean(path);
			if (!inMem(p)) { cb(err("EROFS")); return; }
			if (mem.has(p)) { cb(err("EEXIST")); return; }
			const dir = mem.get(parent(p));
			if (!dir || !dir.dir) { cb(err("ENOENT")); return; }
			mem.set(p, {dir: true, mode: perm, mtimeMs: now()});
			cb(null);
		},
		unlink(path, cb) {
			const p = clean(path), e = mem.get(p);
			if (!inMem(p)) { cb(err("EROFS")); return; }
			if (!e) { cb(err("ENOENT")); return; }
			if (e.dir) { cb(err("EISDIR")); return; }
			mem.delete(p);
			cb(null);
		},
		rmdir(path, cb) {
			const p = clean(path), e = mem.get(p);
			if (!inMem(p) || p === tmp) { cb(err("EROFS")); return; }
			if (!e) { cb(err("ENOENT")); return; }
			if (!e.dir) { cb(err("ENOTDIR")); return; }
			for (const k of mem.keys()) if (parent(k) === p) { cb(err("ENOTEMPTY")); return; }
			mem.delete(p);
			cb(null);
		},
		rename(from, to, cb) {
			const a = clean(from), b = clean(to);
			if (!inMem(a) || !inMem(b)) { cb(err("EROFS")); return; }
			const e = mem.get(a);
			if (!e) { cb(err("ENOENT")); return; }
			if (e.dir) { cb(err("ENOSYS")); return; }
			mem.delete(a);
			mem.set(b, e);
			cb(null);
		},
		ftruncate(fd, length, cb) {
			const f = fds.get(fd);
			if (!f || !f.writable) { cb(err("EBADF")); return; }
			f.entry.size = Math.min(f.entry.size, length);
			cb(null);
		},
		truncate(path, length, cb) {
			const e = mem.get(clean(path));
			if (!e || e.dir) { cb(err("ENOENT")); return; }
			e.size = Math.min(e.size, length);
			cb(null);
		},
		fsync(fd, cb) { cb(null); },
		chmod(path, mode, cb) { cb(null); },
		fchmod(fd, mode, cb) { cb(null); },
		chown(path, uid, gid, cb) { cb(null); },
		fchown(fd, uid, gid, cb) { cb(null); },
		lchown(path, uid, gid, cb) { cb(null); },
		utimes(path, atime, mtime, cb) { cb(null); },
		readlink(path, cb) { cb(err("EINVAL")); },
		link(path, link, cb) { cb(err("ENOSYS")); },
		symlink(path, link, cb) { cb(err("ENOSYS")); },
	};
	globalThis.process = {
		getuid() { return -1; }, getgid() { return -1; }, geteuid() { return -1; }, getegid() { return -1; },
		getgroups() { throw err("ENOSYS"); },
		pid: -1, ppid: -1,
		umask() { throw err("ENOSYS"); },
		cwd() { return config.cwd; },
		chdir() { throw err("ENOSYS"); },
	};
})();
