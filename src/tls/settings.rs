//! What certificate management acts on: the Service the certificate names, the Secret that keeps
//! it, the objects whose `caBundle` must trust it, and how long certificates live.

use std::net::IpAddr;
use std::time::Duration;

use rustls::pki_types::ServerName;

use super::error::TlsError;

const DAY: u64 = 24 * 60 * 60;

/// Kueue's `internalCertManagement` defaults.
pub const KUEUE_SERVICE_NAME: &str = "kueue-webhook-service";
pub const KUEUE_SECRET_NAME: &str = "kueue-webhook-server-cert";

/// The CRDs whose conversion webhook Kueue's cert rotator keeps trusted.
pub const KUEUE_CONVERSION_CRDS: [&str; 5] = [
    "clusterqueues.kueue.x-k8s.io",
    "cohorts.kueue.x-k8s.io",
    "localqueues.kueue.x-k8s.io",
    "workloads.kueue.x-k8s.io",
    "multikueueclusters.kueue.x-k8s.io",
];

/// Kueue's visibility APIServices.
pub const VISIBILITY_API_SERVICES: [&str; 2] = [
    "v1beta1.visibility.kueue.x-k8s.io",
    "v1beta2.visibility.kueue.x-k8s.io",
];

/// How long certificates live and how often they are looked at.
///
/// The CA is replaced when a serving certificate issued now would outlive it, or when less than a
/// quarter of its lifetime remains; the serving certificate is renewed when less than a quarter of
/// its lifetime remains. With the defaults that is a 10-year CA replaced after 7.5 years and a
/// 1-year serving certificate renewed after 9 months (Kueue's rotator: the same lifetimes, renewed
/// 90 days before expiry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifetimes {
    pub ca: Duration,
    pub serving: Duration,
    /// How far `notBefore` is set in the past, so a peer whose clock is behind accepts a new
    /// certificate (Kueue: one hour).
    pub backdate: Duration,
    /// The longest time between two looks at the Secret and the managed objects, which are also
    /// looked at whenever a watch sees them change (default one hour; Kueue's rotator: 12 hours).
    pub check_interval: Duration,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Lifetimes {
            ca: Duration::from_secs(3650 * DAY),
            serving: Duration::from_secs(365 * DAY),
            backdate: Duration::from_secs(60 * 60),
            check_interval: Duration::from_secs(60 * 60),
        }
    }
}

impl Lifetimes {
    /// A serving certificate is renewed when less than this remains.
    pub fn serving_renew_before(&self) -> Duration {
        self.serving / 4
    }

    /// The CA is replaced when less than this remains.
    pub fn ca_renew_before(&self) -> Duration {
        (self.ca / 4).max(self.serving)
    }
}

/// Everything certificate management needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// Where the Secret and the Service live (Kueue's `namespace`).
    pub namespace: String,
    /// Kueue's `internalCertManagement.webhookServiceName`.
    pub service_name: String,
    /// Kueue's `internalCertManagement.webhookSecretName`.
    pub secret_name: String,
    /// Create the Secret when it is absent. Kueue never does (its RBAC has no `create` on
    /// Secrets and the manifests ship an empty one); a local run may.
    pub create_secret: bool,
    pub mutating_webhook: Option<String>,
    pub validating_webhook: Option<String>,
    /// CRDs whose conversion webhook must trust the CA; a CRD that is absent or converts with
    /// `strategy: None` needs nothing.
    pub conversion_crds: Vec<String>,
    /// APIServices whose `caBundle` must trust the CA (the visibility API's, served with the
    /// same certificate); an absent one needs nothing.
    pub api_services: Vec<String>,
    /// Further DNS names and IP addresses the serving certificate is valid for (the visibility
    /// Service, local runs).
    pub extra_dns_names: Vec<String>,
    pub extra_ips: Vec<IpAddr>,
    pub lifetimes: Lifetimes,
}

impl TlsSettings {
    /// What Kueue's internal cert management manages for `service_name` in `namespace`: the
    /// webhook configurations are named after the Service (`<base>-mutating-webhook-configuration`
    /// and `<base>-validating-webhook-configuration`, `<base>` being the Service name without its
    /// `-webhook-service` suffix), and the conversion webhooks of Kueue's CRDs.
    pub fn kueue(namespace: &str, service_name: &str, secret_name: &str) -> Self {
        let base = service_name
            .strip_suffix("-webhook-service")
            .unwrap_or(service_name);
        TlsSettings {
            namespace: namespace.to_string(),
            service_name: service_name.to_string(),
            secret_name: secret_name.to_string(),
            create_secret: false,
            mutating_webhook: Some(format!("{base}-mutating-webhook-configuration")),
            validating_webhook: Some(format!("{base}-validating-webhook-configuration")),
            conversion_crds: KUEUE_CONVERSION_CRDS.map(String::from).to_vec(),
            api_services: Vec::new(),
            extra_dns_names: Vec::new(),
            extra_ips: Vec::new(),
            lifetimes: Lifetimes::default(),
        }
    }

    /// Also serves the visibility API with this certificate: it names the visibility Service
    /// (`<base>-visibility-server`, Kueue's name beside `<base>-webhook-service`) and Kueue's
    /// visibility APIServices trust its CA.
    pub fn serve_visibility(&mut self) {
        let base = self
            .service_name
            .strip_suffix("-webhook-service")
            .unwrap_or(&self.service_name);
        let service = format!("{base}-visibility-server");
        for name in [
            format!("{service}.{}.svc", self.namespace),
            format!("{service}.{}.svc.cluster.local", self.namespace),
        ] {
            if !self.extra_dns_names.contains(&name) {
                self.extra_dns_names.push(name);
            }
        }
        self.api_services = VISIBILITY_API_SERVICES.map(String::from).to_vec();
    }

    /// The DNS names the serving certificate must be valid for, the first being its common name:
    /// the Service's in-cluster names, then the extra ones.
    pub fn dns_names(&self) -> Vec<String> {
        let (service, namespace) = (&self.service_name, &self.namespace);
        let mut names = vec![
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.cluster.local"),
        ];
        for name in &self.extra_dns_names {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// Refuses settings that could not produce a usable certificate or would renew forever.
    pub fn validate(&self) -> Result<(), TlsError> {
        let invalid = |why: String| Err(TlsError::Settings(why));
        for (what, value) in [
            ("namespace", &self.namespace),
            ("service name", &self.service_name),
            ("secret name", &self.secret_name),
        ] {
            if value.is_empty() {
                return invalid(format!("the {what} is empty"));
            }
        }
        for name in self.dns_names() {
            if !matches!(
                ServerName::try_from(name.as_str()),
                Ok(ServerName::DnsName(_))
            ) {
                return invalid(format!("{name:?} is not a DNS name"));
            }
        }
        let l = &self.lifetimes;
        let century = Duration::from_secs(36525 * DAY);
        if l.serving.is_zero() || l.check_interval.is_zero() {
            return invalid("lifetimes and the check interval must be positive".into());
        }
        if l.ca <= l.serving {
            return invalid(format!(
                "the CA lifetime ({:?}) must be longer than the serving lifetime ({:?})",
                l.ca, l.serving
            ));
        }
        if l.ca > century || l.backdate > century {
            return invalid("lifetimes longer than a century are not supported".into());
        }
        Ok(())
    }
}

/// `t + d`, saturating at the end of representable time.
pub(super) fn later(t: time::OffsetDateTime, d: Duration) -> time::OffsetDateTime {
    time::Duration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d))
        .unwrap_or_else(|| time::PrimitiveDateTime::MAX.assume_utc())
}

/// `t - d`, saturating at the start of representable time.
pub(super) fn earlier(t: time::OffsetDateTime, d: Duration) -> time::OffsetDateTime {
    time::Duration::try_from(d)
        .ok()
        .and_then(|d| t.checked_sub(d))
        .unwrap_or_else(|| time::PrimitiveDateTime::MIN.assume_utc())
}

#[cfg(test)]
mod tests;
