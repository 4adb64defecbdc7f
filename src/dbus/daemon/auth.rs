//! polkit authorization of the **caller** of a method.
//!
//! The subject is the caller's unique bus name taken from the message header
//! (`system-bus-name`): polkitd itself resolves it to the caller's process and
//! user. The daemon's own pid is never used: that would authorize everybody,
//! since hlctld runs as root. Reads need no action at all; every change needs
//! one of [`Action`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::{info, warn};
use zbus::Connection;
use zbus::message::{Flags, Header};
use zbus::names::BusName;
use zbus_polkit::policykit1::{AuthorityProxy, CheckAuthorizationFlags, Subject};

pub use crate::dbus::wire::action::Action;
use crate::dbus::wire::error::{Error, Result};

/// Who called: the unique bus name and, when the bus tells, the Unix uid.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) sender: String,
    pub(crate) uid: Option<u32>,
}

impl Caller {
    /// `uid 1000` or `uid ?` for logs.
    pub(crate) fn uid_text(&self) -> String {
        self.uid.map_or("?".into(), |u| u.to_string())
    }

    /// Who asked, for the history row of what this caller starts (an
    /// unknown uid is recorded as `u32::MAX`, never as root's).
    pub(crate) fn requester(&self, record: bool) -> crate::ops::Requester {
        crate::ops::Requester {
            uid: self.uid.unwrap_or(u32::MAX),
            record,
        }
    }

    /// The same connection, or another connection of the same (known) user.
    pub(crate) fn same_user(&self, other: &Caller) -> bool {
        self.sender == other.sender || (self.uid.is_some() && self.uid == other.uid)
    }
}

/// The caller of the method whose header is `hdr`.
pub(crate) async fn caller(conn: &Connection, hdr: &Header<'_>) -> Result<Caller> {
    let sender = hdr
        .sender()
        .ok_or_else(|| Error::NotAuthorized("the message has no sender".into()))?;
    let uid = match zbus::fdo::DBusProxy::new(conn).await {
        Ok(bus) => bus
            .get_connection_unix_user(BusName::Unique(sender.clone()))
            .await
            .ok(),
        Err(_) => None,
    };
    Ok(Caller {
        sender: sender.to_string(),
        uid,
    })
}

/// Ask polkit whether the caller of `hdr` may perform every one of `actions`.
/// Refusal → [`Error::NotAuthorized`], logged with the caller's uid.
pub(crate) async fn authorize(
    conn: &Connection,
    hdr: &Header<'_>,
    actions: &[Action],
    subject_detail: &str,
) -> Result<Caller> {
    let who = caller(conn, hdr).await?;
    for &action in actions {
        if let Err(e) = check(conn, hdr, &who, action, subject_detail).await {
            warn!(
                caller_uid = %who.uid_text(),
                sender = %who.sender,
                action = action.id(),
                target = subject_detail,
                "refused: {e:?}"
            );
            return Err(e);
        }
    }
    Ok(who)
}

async fn check(
    conn: &Connection,
    hdr: &Header<'_>,
    who: &Caller,
    action: Action,
    detail: &str,
) -> Result<()> {
    let subject = Subject::new_for_message_header(hdr)
        .map_err(|e| Error::NotAuthorized(format!("cannot identify the caller: {e}")))?;
    let flags = if hdr
        .primary()
        .flags()
        .contains(Flags::ALLOW_INTERACTIVE_AUTH)
    {
        CheckAuthorizationFlags::ALLOW_USER_INTERACTION
    } else {
        CheckAuthorizationFlags::empty()
    };
    let mut details = HashMap::new();
    if !detail.is_empty() {
        details.insert("target", detail);
    }
    let refused = || {
        Error::NotAuthorized(format!(
            "not authorized to {} (polkit action {}); ask an administrator, or run hlctl as root",
            action.what(),
            action.id()
        ))
    };
    let authority = match AuthorityProxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
    {
        Ok(a) => a,
        Err(e) => return fallback(who, action, &e.to_string()).ok_or_else(refused),
    };
    let checked = if flags.is_empty() {
        authority
            .check_authorization(&subject, action.id(), &details, flags, "")
            .await
    } else {
        interactive(conn, &authority, who, (&subject, action, &details)).await?
    };
    match checked {
        Ok(r) if r.is_authorized => Ok(()),
        Ok(r) if r.is_challenge && flags.is_empty() => {
            Err(Error::InteractiveAuthorizationRequired(format!(
                "authentication is required to {} (polkit action {}); call again allowing interactive authorization",
                action.what(),
                action.id()
            )))
        }
        Ok(_) => Err(refused()),
        Err(zbus::Error::MethodError(name, _, _))
            if name.as_str() == "org.freedesktop.DBus.Error.ServiceUnknown"
                || name.as_str() == "org.freedesktop.DBus.Error.NameHasNoOwner" =>
        {
            fallback(who, action, name.as_str()).ok_or_else(refused)
        }
        // zbus hands the bus's own errors over as fdo errors.
        Err(zbus::Error::FDO(e))
            if matches!(
                *e,
                zbus::fdo::Error::ServiceUnknown(_) | zbus::fdo::Error::NameHasNoOwner(_)
            ) =>
        {
            fallback(who, action, &e.to_string()).ok_or_else(refused)
        }
        Err(e) => Err(Error::NotAuthorized(format!(
            "polkit could not decide ({e}); nothing changed"
        ))),
    }
}

/// A check polkit may answer only after an authentication agent asked the
/// user (a prompt is open meanwhile). When the caller's unique name leaves
/// the bus first, the check is cancelled (`CancelCheckAuthorization` with
/// the id it was given, which closes the prompt) and the caller refused.
async fn interactive(
    conn: &Connection,
    authority: &AuthorityProxy<'_>,
    who: &Caller,
    (subject, action, details): (&Subject, Action, &HashMap<&str, &str>),
) -> Result<zbus::Result<zbus_polkit::policykit1::AuthorizationResult>> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = format!(
        "hlctld-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let check = authority.check_authorization(
        subject,
        action.id(),
        details,
        CheckAuthorizationFlags::ALLOW_USER_INTERACTION,
        &id,
    );
    // polkitd ends the session itself too when the subject's name goes, and
    // answers at once: the bus sent NameOwnerChanged before that answer, so
    // looking at the caller first tells which came first.
    tokio::select! {
        biased;
        () = left_the_bus(conn, &who.sender) => {
            let cancelled = match authority.cancel_check_authorization(&id).await {
                Ok(()) => format!("polkit's check {id} cancelled"),
                Err(e) => format!("cancelling polkit's check {id} failed: {e}"),
            };
            // Logged once, by `authorize`, with the caller and the action.
            Err(Error::NotAuthorized(format!(
                "the caller left the bus while polkit was asking to authenticate for {} (polkit action {}): {cancelled}; nothing was started or changed",
                action.what(),
                action.id()
            )))
        }
        r = check => Ok(r),
    }
}

/// Returns once the unique name `sender` has no owner (at once when it has
/// none already); never when it cannot watch.
async fn left_the_bus(conn: &Connection, sender: &str) {
    let watch = async {
        let bus = zbus::fdo::DBusProxy::new(conn).await?;
        let stream = bus
            .receive_name_owner_changed_with_args(&[(0, sender)])
            .await?;
        let here = bus.name_has_owner(BusName::try_from(sender)?).await?;
        zbus::Result::Ok((stream, here))
    };
    let mut stream = match watch.await {
        Ok((stream, true)) => stream,
        // Gone already: the check need not go on.
        Ok((_, false)) => return,
        // The bus cannot say: wait for polkit's answer alone.
        Err(e) => {
            warn!("cannot watch {sender} leaving the bus during a polkit check: {e}");
            return std::future::pending().await;
        }
    };
    while let Some(sig) = crate::dbus::wire::next(&mut stream).await {
        if sig.args().is_ok_and(|a| a.new_owner().is_none()) {
            return;
        }
    }
    std::future::pending::<()>().await;
}

/// Without a polkit authority on the bus, only root is allowed.
fn fallback(who: &Caller, action: Action, why: &str) -> Option<()> {
    if who.uid == Some(0) {
        info!(
            action = action.id(),
            "polkit is not available ({why}): allowing the root caller"
        );
        Some(())
    } else {
        None
    }
}
