use std::path::PathBuf;

use super::*;
use crate::tls::testing::{issued, settings, t0};

/// A directory of its own for one test, removed when the test ends.
struct ScratchDir(PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir(test: &str) -> ScratchDir {
    let dir = std::env::temp_dir().join(format!("kuota-tls-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    ScratchDir(dir)
}

fn write_pair(dir: &Path, crt: &[u8], key: &[u8]) {
    std::fs::write(dir.join(TLS_CRT), crt).unwrap();
    std::fs::write(dir.join(TLS_KEY), key).unwrap();
}

#[tokio::test]
async fn missing_files_leave_the_store_unready_and_name_the_file() {
    let dir = scratch_dir("missing");
    let store = CertStore::new();
    let mut last = None;
    let Look::Unusable(problem) = look(&dir, &store, &mut last).await else {
        panic!("an empty directory must not be usable");
    };
    assert!(problem.contains("tls.crt"), "{problem}");
    assert!(!store.is_ready());
}

#[tokio::test]
async fn a_pair_is_presented_once_and_a_renewed_pair_replaces_it() {
    let dir = scratch_dir("renewed");
    let settings = settings();
    let first = issued(t0(), &settings);
    write_pair(&dir, &first.data[TLS_CRT], &first.data[TLS_KEY]);
    let store = CertStore::new();
    let mut last = None;
    assert_eq!(look(&dir, &store, &mut last).await, Look::Installed);
    assert!(store.is_ready());
    assert_eq!(look(&dir, &store, &mut last).await, Look::Unchanged);

    let second = issued(t0(), &settings);
    write_pair(&dir, &second.data[TLS_CRT], &second.data[TLS_KEY]);
    assert_eq!(look(&dir, &store, &mut last).await, Look::Installed);
    let presented = store.current().unwrap();
    assert_eq!(presented.cert, second.serving.key.cert);
}

#[tokio::test]
async fn a_garbled_renewal_keeps_the_previous_pair() {
    let dir = scratch_dir("garbled");
    let settings = settings();
    let good = issued(t0(), &settings);
    write_pair(&dir, &good.data[TLS_CRT], &good.data[TLS_KEY]);
    let store = CertStore::new();
    let mut last = None;
    assert_eq!(look(&dir, &store, &mut last).await, Look::Installed);

    write_pair(&dir, &good.data[TLS_CRT], b"not a key");
    let Look::Unusable(problem) = look(&dir, &store, &mut last).await else {
        panic!("a garbled key must not be presented");
    };
    assert!(problem.contains("tls.key"), "{problem}");
    assert_eq!(store.current().unwrap().cert, good.serving.key.cert);
    assert!(store.is_ready());
}
