//! The values Kueue's configuration defaulting gives a field that is not set.

use super::duration::GoDuration;

pub const WEBHOOK_PORT: u16 = 9443;
pub const VISIBILITY_PORT: u16 = 8082;
pub const WEBHOOK_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
pub const WEBHOOK_SERVICE_NAME: &str = "kueue-webhook-service";
pub const WEBHOOK_SECRET_NAME: &str = "kueue-webhook-server-cert";
pub const METRICS_BIND_ADDRESS: &str = ":8443";
pub const HEALTH_PROBE_BIND_ADDRESS: &str = ":8081";
/// controller-runtime's probe paths.
pub const READINESS_ENDPOINT_NAME: &str = "/readyz";
pub const LIVENESS_ENDPOINT_NAME: &str = "/healthz";
pub const LEADER_ELECTION_ID: &str = "c1f6bfd2.kueue.x-k8s.io";
pub const LEASE_DURATION: GoDuration = GoDuration::from_secs(15);
pub const RENEW_DEADLINE: GoDuration = GoDuration::from_secs(10);
pub const RETRY_PERIOD: GoDuration = GoDuration::from_secs(2);
pub const CLIENT_QPS: f32 = 300.0;
pub const CLIENT_BURST: i32 = 500;
pub const WAIT_FOR_PODS_READY_TIMEOUT: GoDuration = GoDuration::from_secs(30 * 60);
pub const REQUEUING_BACKOFF_BASE_SECONDS: i32 = 60;
pub const REQUEUING_BACKOFF_MAX_SECONDS: i32 = 3600;
