//! The plain, single-threaded topic table that the locked stores wrap.

use super::messages::Messages;
use foldhash::fast::RandomState;
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct Table {
    index: HashMap<Box<[u8]>, usize, RandomState>,
    topics: Vec<Topic>,
}

struct Topic {
    name: Box<[u8]>,
    messages: Messages,
}

impl Table {
    pub(crate) fn post(&mut self, topic: &[u8], message: &[u8]) -> u64 {
        let i = match self.index.get(topic) {
            Some(&i) => i,
            None => {
                self.topics.push(Topic {
                    name: topic.into(),
                    messages: Messages::default(),
                });
                self.index.insert(topic.into(), self.topics.len() - 1);
                self.topics.len() - 1
            }
        };
        self.topics[i].messages.push(message)
    }

    fn messages(&self, topic: &[u8]) -> Option<&Messages> {
        self.index.get(topic).map(|&i| &self.topics[i].messages)
    }

    /// Message `id` of `topic`, if there is one.
    pub(crate) fn message(&self, topic: &[u8], id: u64) -> Option<&[u8]> {
        self.messages(topic)?.get(id)
    }

    pub(crate) fn count(&self, topic: &[u8]) -> u64 {
        self.messages(topic).map_or(0, Messages::len)
    }

    pub(crate) fn topics(&self) -> usize {
        self.topics.len()
    }

    pub(crate) fn list_part(
        &self,
        from: usize,
        end: usize,
        budget: usize,
        out: &mut Vec<u8>,
    ) -> usize {
        let end = end.min(self.topics.len());
        let names = self.topics[from.min(end)..end].iter().map(|t| &*t.name);
        super::push_entries(names, from, budget, out)
    }
}
