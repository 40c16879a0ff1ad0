//! The controller's image reference: by tag (the chart's appVersion unless set), or pinned by the
//! digest scripts/image.sh prints, which then wins over the tag.

use super::render::{CASES, refusal, render};

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn image(values: &str) -> String {
    let case = &CASES[0];
    let rendered = render(case, &[], values);
    rendered.manager(case.fullname)["image"]
        .as_str()
        .expect("the manager container names an image")
        .to_string()
}

#[test]
fn the_image_is_pinned_by_digest_when_one_is_given() {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(image(""), format!("ghcr.io/kuota/kuota:{version}"));
    assert_eq!(
        image(
            "controllerManager:\n  manager:\n    image:\n      repository: registry.example/kuota\n      tag: dev\n"
        ),
        "registry.example/kuota:dev"
    );
    assert_eq!(
        image(&format!(
            "controllerManager:\n  manager:\n    image:\n      repository: registry.example/kuota\n      digest: {DIGEST}\n"
        )),
        format!("registry.example/kuota@{DIGEST}")
    );
    assert_eq!(
        image(&format!(
            "controllerManager:\n  manager:\n    image:\n      repository: ghcr.io/kuota/kuota\n      tag: dev\n      digest: {DIGEST}\n"
        )),
        format!("ghcr.io/kuota/kuota@{DIGEST}"),
        "the digest names the image; a tag beside it is not used"
    );
}

#[test]
fn a_digest_that_is_not_sha256_is_refused() {
    for digest in ["sha256:abc", "0123456789abcdef", "latest", "sha512:00"] {
        let values = format!(
            "controllerManager:\n  manager:\n    image:\n      repository: ghcr.io/kuota/kuota\n      digest: \"{digest}\"\n"
        );
        let message = refusal(&CASES[0], &values);
        assert!(
            message.contains("digest"),
            "digest {digest}: helm's refusal names no digest: {message}"
        );
    }
}
