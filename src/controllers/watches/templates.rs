//! Pod templates shared between the Workloads read with equal ones. The Workloads of one Job
//! template (or of one pod shape) carry the same template; a pod template is most of a Workload's
//! size in memory, so each Workload read keeps a reference to one copy instead of its own.

use std::hash::{DefaultHasher, Hasher};
use std::io;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::weak_pool::WeakPool;
use crate::api::Workload;

/// The templates of the Workloads read so far, by a hash of their serialized form.
#[derive(Debug, Default)]
pub struct Templates {
    pool: WeakPool<PodTemplateSpec>,
}

impl Templates {
    /// `workload` with each pod template replaced by an equal one already held, when there is
    /// one.
    pub fn share(&mut self, mut workload: Workload) -> Workload {
        for pod_set in &mut workload.spec.pod_sets {
            pod_set.template = self.template(std::mem::take(&mut pod_set.template));
        }
        workload
    }

    fn template(&mut self, template: Arc<PodTemplateSpec>) -> Arc<PodTemplateSpec> {
        let mut hash = Hash(DefaultHasher::new());
        if serde_json::to_writer(&mut hash, &*template).is_err() {
            return template;
        }
        self.pool.share(hash.0.finish(), template)
    }
}

/// Feeds what is written into a hasher.
struct Hash(DefaultHasher);

impl io::Write for Hash {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::watches::slim;

    fn workload(name: &str, cpu: &str) -> Workload {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns", "managedFields": [{"manager": "m"}]},
            "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}]},
        }))
        .expect("test workload")
    }

    #[test]
    fn workloads_with_equal_templates_share_one_and_unequal_ones_do_not() {
        let mut templates = Templates::default();
        let a = templates.share(slim(workload("a", "1")));
        let b = templates.share(slim(workload("b", "1")));
        let c = templates.share(slim(workload("c", "2")));
        assert!(Arc::ptr_eq(
            &a.spec.pod_sets[0].template,
            &b.spec.pod_sets[0].template
        ));
        assert!(!Arc::ptr_eq(
            &a.spec.pod_sets[0].template,
            &c.spec.pod_sets[0].template
        ));
        assert_eq!(a, slim(workload("a", "1")));
        assert_eq!(
            c.spec.pod_sets[0].template,
            workload("c", "2").spec.pod_sets[0].template
        );
        assert_eq!(a.metadata.managed_fields, None);
    }
}
