//! What the key-value protocols' models share (kv, RESP): a key's model
//! holds the key's name and the values the checker wrote to it, a value
//! named by its index; the history is checked one key at a time.

use crate::concurrency::Part;
use crate::lin::{Model, Operation};
use std::marker::PhantomData;

/// One key's model for operations `O`: its name and the values written
/// to it. Each protocol implements [`Model`] for its own `Key<O>`.
pub struct Key<O> {
    pub name: String,
    pub values: Vec<String>,
    ops: PhantomData<fn() -> O>,
}

impl<O> Key<O> {
    pub fn new(name: String, values: Vec<String>) -> Key<O> {
        Key {
            name,
            values,
            ops: PhantomData,
        }
    }

    /// Value `v` as a reply shows it: quoted.
    pub fn value(&self, v: u32) -> String {
        format!("\"{}\"", self.values[v as usize])
    }
}

/// One partition per key: key `i` is `names[i]`, with the values written
/// to it and the operations on it.
pub fn parts<O>(
    names: &[String],
    values: Vec<Vec<String>>,
    ops: Vec<Vec<Operation<O>>>,
) -> Vec<Part<Key<O>>>
where
    Key<O>: Model<Op = O>,
{
    ops.into_iter()
        .zip(values)
        .zip(names)
        .map(|((ops, values), name)| Part {
            name: format!("key {name}"),
            model: Key::new(name.clone(), values),
            ops,
        })
        .collect()
}
