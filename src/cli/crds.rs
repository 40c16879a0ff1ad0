//! `kuota crds`: prints the CRDs, or writes one file per kind.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::api::crd;

/// Arguments of `kuota crds`.
#[derive(Debug, Args)]
pub struct CrdsArgs {
    /// Write one file per CRD into this directory instead of printing them.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Prints every CRD as multi-document YAML, or writes them into `--out-dir`.
pub fn run(args: &CrdsArgs) -> anyhow::Result<()> {
    let crds = crate::v1beta1::crds()?;
    match &args.out_dir {
        None => Ok(super::stdio::print(&crd::render_all(&crds)?)?),
        Some(dir) => write_files(dir, &crds),
    }
}

fn write_files(dir: &Path, crds: &[CustomResourceDefinition]) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for one in crds {
        let path = dir.join(crd::file_name(one));
        let text = crd::to_yaml(one)?;
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
