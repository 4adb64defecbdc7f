//! Client side: typed proxies for hlctl.

use std::collections::HashMap;

use zbus::{OwnedObjectPath, OwnedVariant, Variant, proxy};

use crate::dbus::wire::set_rows::Row;

#[proxy(
    interface = "org.hlctl.Daemon1.Manager",
    default_service = "org.hlctl.Daemon1",
    default_path = "/org/hlctl/Daemon1"
)]
pub(crate) trait Manager {
    #[zbus(property)]
    fn version(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn capabilities(&self) -> zbus::Result<Vec<String>>;
    #[zbus(property)]
    fn links(&self) -> zbus::Result<Vec<OwnedObjectPath>>;
    #[zbus(property)]
    fn sysctl_tuning_set(&self) -> zbus::Result<HashMap<String, String>>;
    fn get_link(&self, name: &str) -> zbus::Result<OwnedObjectPath>;
    fn describe_links(&self, names: &[&str]) -> zbus::Result<String>;
    fn show_sysctl(&self, keys: &[&str]) -> zbus::Result<Vec<crate::dbus::wire::sysctl::ShowRow>>;
    #[zbus(allow_interactive_auth)]
    fn set_sysctl(
        &self,
        values: &[(&str, &str)],
        options: HashMap<&str, Variant<'_>>,
    ) -> zbus::Result<(
        Vec<crate::dbus::wire::sysctl::SetRow>,
        HashMap<String, OwnedVariant>,
    )>;
    #[zbus(allow_interactive_auth)]
    fn start_benchmark(
        &self,
        kind: &str,
        params: &HashMap<String, OwnedVariant>,
        options: HashMap<&str, Variant<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;
    // Tune, Doctor, Report and Check: `cli::remote::Remote::start`, from
    // their declarations (`dbus::wire::verb`).
    fn list_history(
        &self,
        filter: HashMap<String, Variant<'_>>,
    ) -> zbus::Result<Vec<HashMap<String, OwnedVariant>>>;
    fn list_baselines(&self) -> zbus::Result<Vec<HashMap<String, OwnedVariant>>>;
    fn compare(
        &self,
        name: &str,
        options: HashMap<&str, Variant<'_>>,
    ) -> zbus::Result<HashMap<String, OwnedVariant>>;
    fn usage(
        &self,
        iface: &str,
        options: HashMap<&str, Variant<'_>>,
    ) -> zbus::Result<HashMap<String, OwnedVariant>>;
    #[zbus(allow_interactive_auth)]
    fn save_baseline(&self, name: &str) -> zbus::Result<u32>;
    fn tune_status(&self) -> zbus::Result<HashMap<String, OwnedVariant>>;
    #[zbus(allow_interactive_auth)]
    fn rollback(&self, interface: &str) -> zbus::Result<HashMap<String, OwnedVariant>>;
}

#[proxy(
    interface = "org.hlctl.Daemon1.Link",
    default_service = "org.hlctl.Daemon1"
)]
pub(crate) trait Link {
    #[zbus(property)]
    fn name(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn ifindex(&self) -> zbus::Result<u32>;
    #[zbus(property)]
    fn mtu(&self) -> zbus::Result<u32>;
    fn describe(&self) -> zbus::Result<String>;
    #[zbus(allow_interactive_auth)]
    fn apply_changes(
        &self,
        settings: HashMap<String, Variant<'_>>,
        options: HashMap<&str, Variant<'_>>,
    ) -> zbus::Result<(Vec<Row>, HashMap<String, OwnedVariant>)>;
}

#[proxy(
    interface = "org.hlctl.Daemon1.Job",
    default_service = "org.hlctl.Daemon1"
)]
pub(crate) trait Job {
    #[zbus(property)]
    fn kind(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn state(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn progress(&self) -> zbus::Result<f64>;
    #[zbus(property)]
    fn message(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn result(&self) -> zbus::Result<HashMap<String, OwnedVariant>>;
    #[zbus(property)]
    fn result_json(&self) -> zbus::Result<String>;
    fn cancel(&self) -> zbus::Result<()>;
    fn confirm(&self) -> zbus::Result<()>;
    #[zbus(signal)]
    fn finished(&self, state: &str, result_json: &str) -> zbus::Result<()>;
}
