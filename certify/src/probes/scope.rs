//! The key's scope: another endpoint, another tenant.

use super::basic::auth;
use super::ctx::{Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::{Request, Response};
use crate::contract::KeyScope;

/// The same key and body on the main path, then on `other_path`.
pub async fn other_endpoint(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(other) = c.contract.other_path.clone() else {
        t.skip("the contract names no other_path");
        return Ok(());
    };
    let marker = c.marker("other_endpoint", 0);
    let key = KeyUse::Key(c.key("other_endpoint", 0));
    let body = c.body(&marker);
    let first = c
        .send(t, "main endpoint", &c.create_main(&body, &key))
        .await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let second = c
        .send(
            t,
            "other endpoint, same key",
            &c.create(&other, &body, &key, &c.contract.primary),
        )
        .await?;
    let separate = c.is_success(second.status) && c.id_of(&second) != c.id_of(&first);
    match c.contract.key_scope {
        KeyScope::PerPath if separate => {
            t.held(format!("{other} did its own work under the same key"));
        }
        KeyScope::PerPath if c.is_success(second.status) => t.fail(format!(
            "the same key on {other} replayed the main endpoint's object (declared key_scope: per_path)"
        )),
        KeyScope::PerPath => t.fail(format!(
            "the same key on {other} answered {}: the key is shared across endpoints (declared key_scope: per_path)",
            second.status
        )),
        KeyScope::PerTenant | KeyScope::Global => shared_key(c, t, &other, &first, &second),
    }
    Ok(())
}

/// A key declared shared across endpoints: on another endpoint it is the
/// same key, so the answer is the declared mismatch status or the first
/// result, never separate work.
fn shared_key(c: &Ctx, t: &mut Trail, other: &str, first: &Response, second: &Response) {
    let mismatch = &c.contract.mismatch_status;
    if mismatch.contains(&second.status) && !c.is_success(second.status) {
        t.held(format!(
            "the same key on {other} was the same key: refused as other arguments ({})",
            second.status
        ));
    } else if c.is_success(second.status) && c.id_of(second) == c.id_of(first) {
        t.held(format!(
            "the same key on {other} was the same key: the first result replayed"
        ));
    } else if c.is_success(second.status) {
        t.fail(format!(
            "the same key on {other} did separate work ({}), though the key is declared shared across endpoints",
            second.status
        ));
    } else {
        t.fail(format!(
            "the same key on {other} answered {}, declared the mismatch status {mismatch:?} or the first result",
            second.status
        ));
    }
}

/// The same key and body from the second tenant.
pub async fn cross_tenant(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(second_tenant) = c.contract.second_tenant.clone() else {
        t.skip("the contract names no second_tenant");
        return Ok(());
    };
    let marker = c.marker("cross_tenant", 0);
    let key = KeyUse::Key(c.key("cross_tenant", 0));
    let body = c.body(&marker);
    let first = c.send(t, "tenant 1", &c.create_main(&body, &key)).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let Some(first_id) = c.id_of(&first) else {
        return Err(Stop("the first create named no id".to_owned()));
    };
    let second = c
        .send(
            t,
            "tenant 2, same key and body",
            &c.create(&c.contract.path, &body, &key, &second_tenant),
        )
        .await?;
    if String::from_utf8_lossy(&second.body).contains(&first_id) {
        t.hard(format!(
            "tenant 2's answer ({}) holds tenant 1's object {first_id}: a cross-tenant leak",
            second.status
        ));
    } else {
        judge_second_tenant(c, t, &second);
    }
    if let Some(retrieve) = &c.contract.retrieve {
        let req = Request {
            method: "GET".to_owned(),
            path: retrieve
                .path
                .replace("{id}", &crate::readback::percent(&first_id)),
            headers: auth(c, &second_tenant, retrieve.auth),
            body: Vec::new(),
        };
        let got = c.send(t, "tenant 2 retrieves tenant 1's id", &req).await?;
        if (200..300).contains(&got.status) && String::from_utf8_lossy(&got.body).contains(&marker)
        {
            t.hard(format!("tenant 2 can retrieve tenant 1's {first_id}"));
        }
    }
    Ok(())
}

/// Tenant 2's answer, when it leaks nothing: separate work for a key scoped
/// per tenant; a refusal for a key declared global (one store for everyone).
/// Tenant 1's result is never an answer for tenant 2, whatever the scope: a
/// global store that replays it is a leak, judged before this.
fn judge_second_tenant(c: &Ctx, t: &mut Trail, second: &Response) {
    let global = c.contract.key_scope == KeyScope::Global;
    match (global, c.is_success(second.status)) {
        (false, true) => t.held("tenant 2 got its own object"),
        (false, false) => t.fail(format!(
            "tenant 2's create answered {}: keys are shared across tenants (no leak, but no separate work)",
            second.status
        )),
        (true, false) => t.held(format!(
            "tenant 2 was refused ({}) without tenant 1's object: one key store, as declared (key_scope: global)",
            second.status
        )),
        (true, true) => t.fail(format!(
            "tenant 2 got its own object ({}): keys are separate per tenant, declared key_scope: global",
            second.status
        )),
    }
}
