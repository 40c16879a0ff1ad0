//! The certificate the webhook server presents, swapped at run time, and whether the API server
//! can trust it yet.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

#[derive(Debug, Default)]
struct Inner {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    trusted: AtomicBool,
    /// Whether readiness also waits for CA bundles someone else writes (cert-manager's
    /// injector), and whether they are in place.
    awaits_injection: AtomicBool,
    injected: AtomicBool,
}

/// Cheap to clone; clones share one certificate. The webhook server resolves every handshake
/// through it, so a swap takes effect on the next connection while open ones keep theirs.
#[derive(Clone, Debug, Default)]
pub struct CertStore {
    inner: Arc<Inner>,
}

impl CertStore {
    pub fn new() -> Self {
        CertStore::default()
    }

    /// This store as what rustls asks for a server certificate.
    pub fn resolver(&self) -> Arc<dyn ResolvesServerCert> {
        Arc::new(self.clone())
    }

    /// The certificate presented now.
    pub fn current(&self) -> Option<Arc<CertifiedKey>> {
        self.inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Presents `key` from the next handshake on. Returns whether it differs from the one
    /// presented before.
    pub fn install(&self, key: Arc<CertifiedKey>) -> bool {
        let mut current = self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let changed = current.as_ref().is_none_or(|old| old.cert != key.cert);
        *current = Some(key);
        changed
    }

    /// Records whether every managed webhook configuration trusts the CA that signed the
    /// presented certificate.
    pub fn set_trusted(&self, trusted: bool) {
        self.inner.trusted.store(trusted, Ordering::Release);
    }

    /// True once a certificate is presented and the API server trusts it: before that, a webhook
    /// call would fail its TLS handshake, so the replica must not count as ready.
    pub fn is_ready(&self) -> bool {
        self.inner.trusted.load(Ordering::Acquire) && self.current().is_some()
    }

    /// From now on, [`CertStore::serves_trusted`] also waits for [`CertStore::set_injected`]:
    /// the CA bundles of the webhook configurations are written by someone else.
    pub fn await_injection(&self) {
        self.inner.awaits_injection.store(true, Ordering::Release);
    }

    /// Records whether every object that must trust the issuer's CA holds it.
    pub fn set_injected(&self, injected: bool) {
        self.inner.injected.store(injected, Ordering::Release);
    }

    /// Whether the injected bundles were last seen in place.
    pub fn is_injected(&self) -> bool {
        self.inner.injected.load(Ordering::Acquire)
    }

    /// What readiness asks: [`CertStore::is_ready`], and the bundles someone else writes in
    /// place when that is awaited.
    pub fn serves_trusted(&self) -> bool {
        self.is_ready()
            && (!self.inner.awaits_injection.load(Ordering::Acquire) || self.is_injected())
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current()
    }
}

#[cfg(test)]
mod tests;
