//! RESP's sequential model, one key at a time: absent, a string (a
//! register; a counter once INCR has made it an integer) or a list (a
//! sequence). A command of the other kind answers WRONGTYPE. Every value
//! the checker writes is unique and never an integer, so a value is named
//! by its index in the key's table of written values.

use crate::lin::Model;

/// What a key holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum State {
    Absent,
    /// A string the checker wrote (its index).
    Str(u32),
    /// A string INCR made: an integer.
    Int(i64),
    /// A list of values, by index.
    List(Vec<u32>),
}

/// A reply as the model reads it; `Other` is anything a command cannot
/// answer (shown as it came).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    Ok,
    Nil,
    Int(i64),
    /// A bulk string: one of the written values, by index.
    Value(u32),
    /// A bulk string that is a number (GET of a counter).
    Number(i64),
    WrongType,
    NotInteger,
    Other(String),
}

/// One command on one key, with its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Set {
        value: u32,
        got: Got,
    },
    Get(Got),
    Del(Got),
    Incr {
        by: i64,
        got: Got,
    },
    RPush {
        value: u32,
        got: Got,
    },
    LIndex {
        index: i64,
        got: Got,
    },
    LLen(Got),
    /// GETSET: the old value, and the new one written (beyond the fast
    /// path: it runs alone, beside the fast path's commands).
    GetSet {
        value: u32,
        got: Got,
    },
    /// GETDEL: the value, and the key gone.
    GetDel(Got),
    /// `LMOVE k k RIGHT LEFT`: the last element moved to the front.
    Rotate(Got),
}

/// One key's model: its name and the values written to it.
pub type Key = crate::keyed::Key<Op>;

impl Key {
    fn show(&self, g: &Got) -> String {
        match g {
            Got::Ok => "+OK".into(),
            Got::Nil => "nil".into(),
            Got::Int(n) => format!(":{n}"),
            Got::Value(v) => self.value(*v),
            Got::Number(n) => format!("\"{n}\""),
            Got::WrongType => "WRONGTYPE".into(),
            Got::NotInteger => "ERR not an integer".into(),
            Got::Other(s) => s.clone(),
        }
    }
}

/// What reading a string key answers in `state`.
fn read(state: &State) -> Got {
    match state {
        State::Absent => Got::Nil,
        State::Str(v) => Got::Value(*v),
        State::Int(n) => Got::Number(*n),
        State::List(_) => Got::WrongType,
    }
}

/// `op`'s reply in `state` and the state after it, as a correct server
/// answers.
fn apply(state: &State, op: &Op) -> (Got, State) {
    let same = state.clone();
    match op {
        Op::Set { value, .. } => (Got::Ok, State::Str(*value)),
        Op::Get(_) => (read(state), same),
        Op::Del(_) => match state {
            State::Absent => (Got::Int(0), same),
            _ => (Got::Int(1), State::Absent),
        },
        Op::Incr { by, .. } => match state {
            State::Absent => (Got::Int(*by), State::Int(*by)),
            State::Int(n) => match n.checked_add(*by) {
                Some(m) => (Got::Int(m), State::Int(m)),
                None => (Got::Other("overflow".into()), same),
            },
            State::Str(_) => (Got::NotInteger, same),
            State::List(_) => (Got::WrongType, same),
        },
        Op::RPush { value, .. } => match state {
            State::Absent => (Got::Int(1), State::List(vec![*value])),
            State::List(l) => {
                let mut l = l.clone();
                l.push(*value);
                (Got::Int(l.len() as i64), State::List(l))
            }
            _ => (Got::WrongType, same),
        },
        Op::LIndex { index, .. } => match state {
            State::Absent => (Got::Nil, same),
            State::List(l) => {
                let i = if *index < 0 {
                    l.len() as i64 + index
                } else {
                    *index
                };
                let got = usize::try_from(i)
                    .ok()
                    .and_then(|i| l.get(i))
                    .map_or(Got::Nil, |v| Got::Value(*v));
                (got, same)
            }
            _ => (Got::WrongType, same),
        },
        Op::LLen(_) => match state {
            State::Absent => (Got::Int(0), same),
            State::List(l) => (Got::Int(l.len() as i64), same),
            _ => (Got::WrongType, same),
        },
        Op::GetSet { .. } | Op::GetDel(_) | Op::Rotate(_) => apply_alone(state, op),
    }
}

/// The commands a server may run apart from the others (serverlab runs
/// them alone): GETSET, GETDEL, a list's rotation.
fn apply_alone(state: &State, op: &Op) -> (Got, State) {
    let same = state.clone();
    match op {
        Op::GetSet { value, .. } => match state {
            State::List(_) => (Got::WrongType, same),
            _ => (read(state), State::Str(*value)),
        },
        Op::GetDel(_) => match state {
            State::List(_) => (Got::WrongType, same),
            _ => (read(state), State::Absent),
        },
        Op::Rotate(_) => match state {
            State::Absent => (Got::Nil, same),
            State::List(l) => {
                let mut l = l.clone();
                let last = l.pop().expect("a list is never empty");
                l.insert(0, last);
                (Got::Value(last), State::List(l))
            }
            _ => (Got::WrongType, same),
        },
        _ => unreachable!("a fast-path command"),
    }
}

fn got(op: &Op) -> &Got {
    match op {
        Op::Set { got, .. }
        | Op::Get(got)
        | Op::Del(got)
        | Op::Incr { got, .. }
        | Op::RPush { got, .. }
        | Op::LIndex { got, .. }
        | Op::LLen(got)
        | Op::GetSet { got, .. }
        | Op::GetDel(got)
        | Op::Rotate(got) => got,
    }
}

impl Model for Key {
    type State = State;
    type Op = Op;

    fn init(&self) -> State {
        State::Absent
    }

    fn step(&self, state: &State, op: &Op) -> Option<State> {
        let (want, next) = apply(state, op);
        (*got(op) == want).then_some(next)
    }

    fn describe_op(&self, op: &Op) -> String {
        let k = &self.name;
        let what = match op {
            Op::Set { value, .. } => format!("SET {k} {}", self.value(*value)),
            Op::Get(_) => format!("GET {k}"),
            Op::Del(_) => format!("DEL {k}"),
            Op::Incr { by, .. } => format!("INCRBY {k} {by}"),
            Op::RPush { value, .. } => format!("RPUSH {k} {}", self.value(*value)),
            Op::LIndex { index, .. } => format!("LINDEX {k} {index}"),
            Op::LLen(_) => format!("LLEN {k}"),
            Op::GetSet { value, .. } => format!("GETSET {k} {}", self.value(*value)),
            Op::GetDel(_) => format!("GETDEL {k}"),
            Op::Rotate(_) => format!("LMOVE {k} {k} RIGHT LEFT"),
        };
        format!("{what} answered {}", self.show(got(op)))
    }

    fn describe_state(&self, state: &State) -> String {
        let k = &self.name;
        match state {
            State::Absent => format!("key {k} was absent"),
            State::Str(v) => format!("key {k} held {}", self.value(*v)),
            State::Int(n) => format!("key {k} held the integer {n}"),
            State::List(l) => {
                let shown: Vec<String> = l
                    .iter()
                    .rev()
                    .take(3)
                    .rev()
                    .map(|v| self.value(*v))
                    .collect();
                let more = if l.len() > 3 { "…, " } else { "" };
                format!(
                    "key {k} held a list of {} ({more}{})",
                    l.len(),
                    shown.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps() {
        let k = Key::new("k".into(), vec!["a".into(), "b".into()]);
        let s = State::Absent;
        assert_eq!(k.step(&s, &Op::Get(Got::Nil)), Some(State::Absent));
        assert_eq!(
            k.step(
                &s,
                &Op::Incr {
                    by: 2,
                    got: Got::Int(2)
                }
            ),
            Some(State::Int(2))
        );
        assert_eq!(
            k.step(&State::Int(2), &Op::Get(Got::Number(2))),
            Some(State::Int(2))
        );
        assert_eq!(
            k.step(
                &s,
                &Op::RPush {
                    value: 0,
                    got: Got::Int(1)
                }
            ),
            Some(State::List(vec![0]))
        );
        let l = State::List(vec![0, 1]);
        assert_eq!(
            k.step(
                &l,
                &Op::RPush {
                    value: 1,
                    got: Got::Int(2)
                }
            ),
            None,
            "a lost push"
        );
        assert_eq!(
            k.step(
                &l,
                &Op::LIndex {
                    index: -1,
                    got: Got::Value(1)
                }
            ),
            Some(l.clone())
        );
        assert_eq!(k.step(&l, &Op::Get(Got::WrongType)), Some(l.clone()));
        assert_eq!(k.step(&l, &Op::Get(Got::Nil)), None);
        assert_eq!(
            k.step(
                &l,
                &Op::Set {
                    value: 0,
                    got: Got::Ok
                }
            ),
            Some(State::Str(0)),
            "SET replaces a list"
        );
        assert_eq!(
            k.step(
                &State::Str(0),
                &Op::Incr {
                    by: 1,
                    got: Got::NotInteger
                }
            ),
            Some(State::Str(0))
        );
        assert_eq!(
            k.step(&State::Str(0), &Op::Del(Got::Int(1))),
            Some(State::Absent)
        );
        assert_eq!(
            k.step(&State::Absent, &Op::LLen(Got::Int(0))),
            Some(State::Absent)
        );
        assert!(k.describe_state(&l).contains("a list of 2"));
        assert_eq!(
            k.step(&l, &Op::Rotate(Got::Value(1))),
            Some(State::List(vec![1, 0]))
        );
        assert_eq!(k.step(&l, &Op::Rotate(Got::Value(0))), None);
        assert_eq!(
            k.step(
                &State::Int(3),
                &Op::GetSet {
                    value: 1,
                    got: Got::Number(3)
                }
            ),
            Some(State::Str(1))
        );
        assert_eq!(
            k.step(&State::Str(0), &Op::GetDel(Got::Value(0))),
            Some(State::Absent)
        );
        assert_eq!(k.step(&State::Absent, &Op::GetDel(Got::Value(0))), None);
    }
}
