//! kv's sequential model, one key at a time: a register that holds a
//! value or nothing. Every value the checker writes is unique, so a
//! value is named by its index in the key's table of written values.

use crate::lin::Model;

/// A reply the model can reason about, or why it cannot be one.
pub type Reply<T> = Result<T, String>;

/// One request on one key, with its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// PUT or POST of value `value`: `Ok(true)` 201 created, `Ok(false)`
    /// 200 replaced.
    Write {
        method: &'static str,
        value: u32,
        created: Reply<bool>,
    },
    /// GET: `Ok(Some(v))` 200 with value v, `Ok(None)` 404.
    Get(Reply<Option<u32>>),
    /// HEAD: the value its ETag names, or 404.
    Head(Reply<Option<u32>>),
    /// GET with `If-None-Match` of value `tag`'s ETag.
    GetIfNoneMatch { tag: u32, got: Reply<Cond> },
    /// DELETE: `Ok(true)` 200 removed, `Ok(false)` 404.
    Delete(Reply<bool>),
}

/// What a conditional GET answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    NotModified,
    Value(u32),
    Missing,
}

/// One key's model: its name and the values written to it.
pub type Key = crate::keyed::Key<Op>;

impl Key {
    fn held(&self, v: &Option<u32>) -> String {
        v.map_or("404".into(), |v| format!("200 {}", self.value(v)))
    }
}

impl Model for Key {
    type State = Option<u32>;
    type Op = Op;

    fn init(&self) -> Option<u32> {
        None
    }

    fn step(&self, state: &Option<u32>, op: &Op) -> Option<Option<u32>> {
        match op {
            Op::Write {
                value,
                created: Ok(c),
                ..
            } => (*c == state.is_none()).then_some(Some(*value)),
            Op::Get(Ok(v)) | Op::Head(Ok(v)) => (v == state).then_some(*state),
            Op::GetIfNoneMatch { tag, got: Ok(got) } => {
                let fits = match got {
                    Cond::NotModified => *state == Some(*tag),
                    Cond::Value(v) => *state == Some(*v) && v != tag,
                    Cond::Missing => state.is_none(),
                };
                fits.then_some(*state)
            }
            Op::Delete(Ok(found)) => (*found == state.is_some()).then_some(None),
            Op::Write {
                created: Err(_), ..
            }
            | Op::Get(Err(_))
            | Op::Head(Err(_))
            | Op::GetIfNoneMatch { got: Err(_), .. }
            | Op::Delete(Err(_)) => None,
        }
    }

    fn describe_op(&self, op: &Op) -> String {
        let k = &self.name;
        let bad = |why: &String| format!("answered {why}");
        match op {
            Op::Write {
                method,
                value,
                created,
            } => format!(
                "{method} /{k} {} {}",
                self.value(*value),
                match created {
                    Ok(true) => "answered 201 (created)".into(),
                    Ok(false) => "answered 200 (replaced)".into(),
                    Err(why) => bad(why),
                }
            ),
            Op::Get(got) => format!(
                "GET /{k} {}",
                got.as_ref()
                    .map_or_else(bad, |v| format!("answered {}", self.held(v)))
            ),
            Op::Head(got) => format!(
                "HEAD /{k} {}",
                got.as_ref().map_or_else(bad, |v| match v {
                    Some(v) => format!("answered 200 with the ETag of {}", self.value(*v)),
                    None => "answered 404".into(),
                })
            ),
            Op::GetIfNoneMatch { tag, got } => format!(
                "GET /{k} If-None-Match: (the ETag of {}) {}",
                self.value(*tag),
                match got {
                    Ok(Cond::NotModified) => "answered 304".into(),
                    Ok(Cond::Value(v)) => format!("answered 200 {}", self.value(*v)),
                    Ok(Cond::Missing) => "answered 404".into(),
                    Err(why) => bad(why),
                }
            ),
            Op::Delete(got) => format!(
                "DELETE /{k} {}",
                match got {
                    Ok(true) => "answered 200 (removed)".into(),
                    Ok(false) => "answered 404".into(),
                    Err(why) => bad(why),
                }
            ),
        }
    }

    fn describe_state(&self, state: &Option<u32>) -> String {
        match state {
            Some(v) => format!("key {} held {}", self.name, self.value(*v)),
            None => format!("key {} was absent", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::new("k".into(), vec!["a".into(), "b".into()])
    }

    #[test]
    fn steps() {
        let k = key();
        let write = |value, created| Op::Write {
            method: "PUT",
            value,
            created: Ok(created),
        };
        assert_eq!(k.step(&None, &write(0, true)), Some(Some(0)));
        assert_eq!(k.step(&Some(1), &write(0, true)), None, "201 over a value");
        assert_eq!(k.step(&Some(1), &write(0, false)), Some(Some(0)));
        assert_eq!(k.step(&Some(0), &Op::Get(Ok(Some(0)))), Some(Some(0)));
        assert_eq!(k.step(&Some(0), &Op::Get(Ok(None))), None);
        let cond = |got| Op::GetIfNoneMatch {
            tag: 0,
            got: Ok(got),
        };
        assert_eq!(k.step(&Some(0), &cond(Cond::NotModified)), Some(Some(0)));
        assert_eq!(k.step(&Some(1), &cond(Cond::NotModified)), None);
        assert_eq!(
            k.step(&Some(0), &cond(Cond::Value(0))),
            None,
            "matched: 304"
        );
        assert_eq!(k.step(&Some(1), &cond(Cond::Value(1))), Some(Some(1)));
        assert_eq!(k.step(&None, &cond(Cond::Missing)), Some(None));
        assert_eq!(k.step(&Some(0), &Op::Delete(Ok(true))), Some(None));
        assert_eq!(k.step(&None, &Op::Delete(Ok(true))), None);
        assert_eq!(k.step(&None, &Op::Get(Err("500".into()))), None);
    }
}
