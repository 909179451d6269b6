//! The plain, single-threaded topic table that the locked stores wrap.

use super::messages::Messages;
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct Table {
    index: HashMap<Box<[u8]>, usize>,
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

    pub(crate) fn read(&self, topic: &[u8], id: u64, out: &mut Vec<u8>) -> bool {
        let found = self.messages(topic).and_then(|m| m.get(id));
        found.map(|m| out.extend_from_slice(m)).is_some()
    }

    pub(crate) fn count(&self, topic: &[u8]) -> u64 {
        self.messages(topic).map_or(0, Messages::len)
    }

    pub(crate) fn list(&self, out: &mut Vec<u8>) {
        for (i, t) in self.topics.iter().enumerate() {
            super::push_entry(out, i == 0, &t.name);
        }
    }
}
