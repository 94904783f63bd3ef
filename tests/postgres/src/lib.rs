//! A throw-away PostgreSQL cluster for kebab's tests (the store's, run on
//! both backends, and the end-to-end tests of team mode): `initdb` into a
//! temporary directory, the server on a Unix socket there (no TCP), trust
//! authentication for the user `kebab`, stopped and removed when dropped.
//! The binaries are Debian's (`postgresql-15`, which `scripts/test.sh`
//! installs), found under `/usr/lib/postgresql/*/bin` or in
//! `KEBAB_PG_BIN`. A root user runs them as `postgres` (the server refuses
//! to run as root).

use std::path::{Path, PathBuf};

pub use postgres;
use std::process::Command;

/// A running cluster.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Cluster {
    /// Create and start a cluster.
    pub fn start() -> Cluster {
        let bin = binaries();
        let dir = tempfile::Builder::new()
            .prefix("kebab-pg")
            .tempdir()
            .unwrap();
        if as_root() {
            run(Command::new("chown").arg("postgres:").arg(dir.path()));
        }
        let data = dir.path().join("data");
        run(pg(&bin, "initdb").arg("-D").arg(&data).args([
            "-U",
            "kebab",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]));
        run(pg(&bin, "pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-o")
            .arg(format!(
                "-k {} -c listen_addresses='' -c fsync=off",
                dir.path().display()
            ))
            .arg("-l")
            .arg(dir.path().join("log"))
            .args(["-w", "start"]));
        Cluster { dir, bin }
    }

    /// The address of the database `name` (the cluster's own `postgres`
    /// database, or one made by [`Cluster::create_database`]), as
    /// `[storage] database` takes it: the socket's directory as `host`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://kebab@localhost/{name}?host={}",
            self.dir.path().display()
        )
    }

    /// A client of the database `name`, to look at what kebab wrote.
    pub fn client(&self, name: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(name), postgres::NoTls).unwrap()
    }

    /// A new, empty database `name`.
    pub fn create_database(&self, name: &str) -> String {
        self.client("postgres")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        self.url(name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = pg(&self.bin, "pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// The directory of PostgreSQL's server binaries.
fn binaries() -> PathBuf {
    if let Some(bin) = std::env::var_os("KEBAB_PG_BIN") {
        return PathBuf::from(bin);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    found.sort_by_key(|bin| {
        bin.parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str()?.parse::<u32>().ok())
    });
    found.pop().expect(
        "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/initdb): \
         scripts/test.sh installs Debian's postgresql-15, or set KEBAB_PG_BIN",
    )
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The PostgreSQL program `name`, run as `postgres` when this is root.
fn pg(bin: &Path, name: &str) -> Command {
    match as_root() {
        true => {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(bin.join(name));
            cmd
        }
        false => Command::new(bin.join(name)),
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
