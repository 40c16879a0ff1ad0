//! The thin layer that talks to the API server: the Secret, the objects whose CA bundles are
//! kept, and watches on all of them. It decides nothing. Writes are updates fenced by the
//! resource version read, because Kueue's RBAC grants `update` on these objects and not `patch`.

use std::fmt;
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{ApiResource, DynamicObject, ObjectMeta, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use super::bundle::Target;
use super::error::TlsError;
use super::material::SecretData;
use super::settings::TlsSettings;

/// How long one request may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// The type a created Secret gets (an existing one keeps its own: the type cannot change).
const SECRET_TYPE: &str = "kubernetes.io/tls";

/// How a fenced write ended, when it did not fail outright.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Done,
    /// The object changed since it was read (or was created meanwhile): read it again.
    Conflict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Mutating,
    Validating,
    Crd,
    ApiService,
}

/// An object whose CA bundles are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Managed {
    pub kind: Kind,
    pub name: String,
}

impl fmt::Display for Managed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Mutating => "MutatingWebhookConfiguration",
            Kind::Validating => "ValidatingWebhookConfiguration",
            Kind::Crd => "CustomResourceDefinition",
            Kind::ApiService => "APIService",
        };
        write!(f, "{kind} {}", self.name)
    }
}

impl Managed {
    pub fn target(&self) -> Target {
        match self.kind {
            Kind::Mutating | Kind::Validating => Target::Webhooks,
            Kind::Crd => Target::Conversion,
            Kind::ApiService => Target::ApiService,
        }
    }

    fn resource(&self) -> ApiResource {
        match self.kind {
            Kind::Mutating => ApiResource::erase::<MutatingWebhookConfiguration>(&()),
            Kind::Validating => ApiResource::erase::<ValidatingWebhookConfiguration>(&()),
            Kind::Crd => ApiResource::erase::<CustomResourceDefinition>(&()),
            Kind::ApiService => ApiResource::erase::<APIService>(&()),
        }
    }

    /// Every object the settings name.
    pub fn all(settings: &TlsSettings) -> Vec<Managed> {
        let named = |kind, name: &Option<String>| name.clone().map(|name| Managed { kind, name });
        named(Kind::Mutating, &settings.mutating_webhook)
            .into_iter()
            .chain(named(Kind::Validating, &settings.validating_webhook))
            .chain(settings.conversion_crds.iter().map(|name| Managed {
                kind: Kind::Crd,
                name: name.clone(),
            }))
            .chain(settings.api_services.iter().map(|name| Managed {
                kind: Kind::ApiService,
                name: name.clone(),
            }))
            .collect()
    }
}

/// The Secret's values as bytes.
pub fn secret_data(secret: &Secret) -> SecretData {
    secret
        .data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.0.clone()))
        .collect()
}

pub struct Cluster {
    client: Client,
    secrets: Api<Secret>,
    secret_name: String,
    namespace: String,
}

impl Cluster {
    pub fn new(client: Client, settings: &TlsSettings) -> Self {
        Cluster {
            secrets: Api::namespaced(client.clone(), &settings.namespace),
            client,
            secret_name: settings.secret_name.clone(),
            namespace: settings.namespace.clone(),
        }
    }

    pub fn secret_label(&self) -> String {
        format!("Secret {}/{}", self.namespace, self.secret_name)
    }

    async fn call<T>(
        verb: &'static str,
        object: String,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<Result<T, kube::Error>, TlsError> {
        match tokio::time::timeout(CALL_TIMEOUT, request).await {
            Ok(result) => Ok(result),
            Err(_) => Err(TlsError::Timeout { verb, object }),
        }
    }

    /// Sorts a write's answer: a conflict is an outcome, anything else failed.
    fn written<T>(
        verb: &'static str,
        object: String,
        result: Result<T, kube::Error>,
    ) -> Result<Written, TlsError> {
        match result {
            Ok(_) => Ok(Written::Done),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Written::Conflict),
            Err(source) => Err(TlsError::Api {
                verb,
                object,
                source,
            }),
        }
    }

    pub async fn read_secret(&self) -> Result<Option<Secret>, TlsError> {
        let label = self.secret_label();
        Self::call(
            "reading",
            label.clone(),
            self.secrets.get_opt(&self.secret_name),
        )
        .await?
        .map_err(|source| TlsError::Api {
            verb: "reading",
            object: label,
            source,
        })
    }

    /// Writes our values into the Secret as `read`, keeping any other keys; creates it when it
    /// was absent.
    pub async fn write_secret(
        &self,
        read: Option<&Secret>,
        data: &SecretData,
    ) -> Result<Written, TlsError> {
        let label = self.secret_label();
        let ours = data.iter().map(|(k, v)| (k.clone(), ByteString(v.clone())));
        match read {
            Some(read) => {
                let mut secret = read.clone();
                secret.metadata.managed_fields = None;
                secret.data.get_or_insert_default().extend(ours);
                let params = PostParams::default();
                let request = self.secrets.replace(&self.secret_name, &params, &secret);
                Self::written(
                    "updating",
                    label.clone(),
                    Self::call("updating", label, request).await?,
                )
            }
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(self.secret_name.clone()),
                        namespace: Some(self.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    type_: Some(SECRET_TYPE.into()),
                    data: Some(ours.collect()),
                    ..Secret::default()
                };
                let params = PostParams::default();
                let request = self.secrets.create(&params, &secret);
                Self::written(
                    "creating",
                    label.clone(),
                    Self::call("creating", label, request).await?,
                )
            }
        }
    }

    fn api(&self, managed: &Managed) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), &managed.resource())
    }

    pub async fn read(&self, managed: &Managed) -> Result<Option<DynamicObject>, TlsError> {
        Self::call(
            "reading",
            managed.to_string(),
            self.api(managed).get_opt(&managed.name),
        )
        .await?
        .map_err(|source| TlsError::Api {
            verb: "reading",
            object: managed.to_string(),
            source,
        })
    }

    /// Replaces `object` as read (its resource version fences the write).
    pub async fn replace(
        &self,
        managed: &Managed,
        object: &DynamicObject,
    ) -> Result<Written, TlsError> {
        let mut object = object.clone();
        object.metadata.managed_fields = None;
        let api = self.api(managed);
        let params = PostParams::default();
        let request = api.replace(&managed.name, &params, &object);
        let label = managed.to_string();
        Self::written(
            "updating",
            label.clone(),
            Self::call("updating", label, request).await?,
        )
    }

    /// One item whenever the Secret or a managed object may have changed (watch errors are
    /// retried with backoff and only logged: the periodic check covers what they miss).
    pub fn changes(&self, managed: &[Managed]) -> BoxStream<'static, ()> {
        let client = &self.client;
        let secrets = Api::<PartialObjectMeta<Secret>>::namespaced(client.clone(), &self.namespace);
        let mut watches = vec![named_watch(secrets, &self.secret_name)];
        for m in managed {
            watches.push(match m.kind {
                Kind::Mutating => named_watch(
                    Api::<PartialObjectMeta<MutatingWebhookConfiguration>>::all(client.clone()),
                    &m.name,
                ),
                Kind::Validating => named_watch(
                    Api::<PartialObjectMeta<ValidatingWebhookConfiguration>>::all(client.clone()),
                    &m.name,
                ),
                Kind::Crd => named_watch(
                    Api::<PartialObjectMeta<CustomResourceDefinition>>::all(client.clone()),
                    &m.name,
                ),
                Kind::ApiService => named_watch(
                    Api::<PartialObjectMeta<APIService>>::all(client.clone()),
                    &m.name,
                ),
            });
        }
        stream::select_all(watches).boxed()
    }
}

/// A metadata-only watch of one object by name.
fn named_watch<K>(api: Api<PartialObjectMeta<K>>, name: &str) -> BoxStream<'static, ()>
where
    PartialObjectMeta<K>: Resource + Clone + DeserializeOwned + fmt::Debug + Send + 'static,
{
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let name = name.to_string();
    watcher(api, config)
        .default_backoff()
        .filter_map(move |event| {
            if let Err(error) = &event {
                tracing::debug!(object = %name, %error, "watch failed; retrying");
            }
            futures::future::ready(event.ok().map(|_| ()))
        })
        .boxed()
}
