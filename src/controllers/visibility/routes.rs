//! The visibility API's HTTP surface: discovery, and `pendingworkloads` of a ClusterQueue or a
//! LocalQueue, asked of the admission loop. Every failure is a Kubernetes `Status`.

use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::controllers::admission::pending_queries::{PendingError, PendingQuery};
use crate::visibility::api::{self, PendingWorkloadsSummary};
use crate::visibility::request::{self, RequestError};
use crate::visibility::{GROUP, discovery};

/// How long a call waits for the admission loop, which answers between passes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

pub fn router(queries: mpsc::Sender<PendingQuery>) -> Router {
    Router::new().fallback(answer).with_state(queries)
}

fn json(code: StatusCode, body: &impl Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (code, [(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot encode a visibility answer");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

fn failure(code: StatusCode, reason: &str, message: String) -> Response {
    json(code, &api::status(code.as_u16(), reason, message, None))
}

async fn answer(
    State(queries): State<mpsc::Sender<PendingQuery>>,
    method: Method,
    uri: Uri,
) -> Response {
    if method != Method::GET {
        return failure(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{method} is not supported; the visibility API answers GET only"),
        );
    }
    let path = uri.path().trim_end_matches('/');
    let group_path = format!("/apis/{GROUP}");
    if path == "/apis" {
        return json(StatusCode::OK, &discovery::group_list());
    }
    if path == group_path {
        return json(StatusCode::OK, &discovery::api_group());
    }
    if let Some(version) = path
        .strip_prefix(group_path.as_str())
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(request::served_version)
    {
        return json(StatusCode::OK, &discovery::resource_list(version));
    }
    let request = match request::parse(path, uri.query()) {
        Ok(request) => request,
        Err(error @ RequestError::NoSuchPath) => {
            return failure(StatusCode::NOT_FOUND, "NotFound", error.to_string());
        }
        Err(error @ RequestError::NotAnInteger { .. }) => {
            return failure(StatusCode::BAD_REQUEST, "BadRequest", error.to_string());
        }
    };
    let (reply, answered) = oneshot::channel();
    let (version, queue) = (request.version, request.queue.clone());
    let unavailable = |why: &str| {
        failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            why.to_string(),
        )
    };
    if queries.send(PendingQuery { request, reply }).await.is_err() {
        return unavailable("the admission loop has stopped");
    }
    match tokio::time::timeout(ANSWER_TIMEOUT, answered).await {
        Ok(Ok(Ok(items))) => json(
            StatusCode::OK,
            &PendingWorkloadsSummary::new(version, items),
        ),
        Ok(Ok(Err(PendingError::Unknown(_)))) => {
            json(StatusCode::NOT_FOUND, &api::queue_not_found(&queue))
        }
        Ok(Ok(Err(PendingError::NotReady))) => {
            unavailable("kuota has not read every object yet; try again shortly")
        }
        Ok(Err(_)) => unavailable("the admission loop has stopped"),
        Err(_) => unavailable("the admission loop did not answer in time"),
    }
}
