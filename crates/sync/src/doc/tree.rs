//! The notebook tree's document: a loro movable tree whose nodes carry each notebook's values in a map.

use std::collections::{BTreeMap, BTreeSet};

use loro::{LoroError, LoroTree, LoroTreeError, TreeID, TreeParentId};

use super::envelope::{Kind, Replica};
use super::{DocError, Imported, NotebookState, internal, map_bool, map_string, set};

/// The longest notebook id the tree takes, in bytes.
const MAX_ID_BYTES: usize = 1024;

const TREE: &str = "notebooks";
const ID: &str = "id";
const TITLE: &str = "title";
const PROTECTED: &str = "protected";
const GONE: &str = "gone";

/// The loro document of the notebook tree: one node per notebook, its map holding `id`, `title`, `protected` and
/// `gone` (each last writer wins; see [the module](super)).
///
/// - **Moves never make a cycle.** If one device moves A into B while another moves B into A, loro applies the
///   moves in its own (Lamport, peer) order and skips the one that would close the cycle, on every replica alike:
///   one of the two notebooks ends up inside the other, and the other stays where it was.
/// - **Removal is a tombstone.** A notebook is never deleted from the tree (loro's delete takes the whole subtree
///   with it, including a notebook another device concurrently moved there). `gone` marks it removed and the node
///   stays. A notebook inside a gone one (moved or created there concurrently with the removal, or left there by
///   the device that removed it) keeps that parent: the state shows it with `parent_id` naming the gone notebook,
///   and where to show it (for instance at the top level) is the caller's choice; a later move takes it out.
/// - **Ids.** The tree knows notebooks by the `id` in their map. Should two nodes carry the same id (two devices
///   created the same notebook concurrently), the one with the smallest loro node id is the notebook on every
///   replica and the other is ignored; notebooks inside either show inside the notebook. A node without an id is
///   not a notebook, and what is inside it shows at the top level.
pub struct TreeDoc {
    replica: Replica,
}

/// What the tree holds, read once.
struct Current {
    /// Notebook id -> its node (the smallest node id when several carry it).
    nodes: BTreeMap<String, TreeID>,
    /// Notebook id -> its state.
    states: BTreeMap<String, NotebookState>,
}

impl TreeDoc {
    /// An empty tree, written as `peer` (the device's loro peer id; `u64::MAX` is reserved).
    pub fn new(peer: u64) -> Result<Self, DocError> {
        Ok(Self {
            replica: Replica::new(Kind::Tree, peer)?,
        })
    }

    /// A tree from bytes [`save`](Self::save) gave, written as `peer` from now on.
    pub fn load(bytes: &[u8], peer: u64) -> Result<Self, DocError> {
        Ok(Self {
            replica: Replica::load(Kind::Tree, bytes, peer)?,
        })
    }

    /// The whole document: its history and its state.
    pub fn save(&self) -> Result<Vec<u8>, DocError> {
        self.replica.save("")
    }

    /// Records `notebooks` as operations, changing only what differs: creates the notebooks the tree lacks, moves
    /// those whose parent changed, and sets the values that changed. A notebook the tree has and `notebooks` does
    /// not name is left as it is (removal is `gone: true`, never absence). Refused, with nothing changed: an
    /// empty or repeated id, a parent that is neither in `notebooks` nor in the tree, a notebook inside itself.
    pub fn fold(&mut self, notebooks: &[NotebookState]) -> Result<(), DocError> {
        let current = self.current();
        let target = Self::target(&current, notebooks)?;
        let tree = self.tree();

        // New notebooks, each created directly in its parent (parents first).
        let mut nodes = current.nodes.clone();
        let mut new: Vec<&NotebookState> = notebooks.iter().filter(|n| !nodes.contains_key(&n.id)).collect();
        while !new.is_empty() {
            let before = new.len();
            let mut waiting = Vec::new();
            for notebook in new {
                let parent = match &notebook.parent_id {
                    None => Some(TreeParentId::Root),
                    Some(parent) => nodes.get(parent).map(|node| TreeParentId::Node(*node)),
                };
                match parent {
                    Some(parent) => {
                        let node = tree.create(parent).map_err(internal)?;
                        set(&tree.get_meta(node).map_err(internal)?, ID, notebook.id.as_str().into())?;
                        nodes.insert(notebook.id.clone(), node);
                    }
                    None => waiting.push(notebook),
                }
            }
            if waiting.len() == before {
                // `target` checked that every parent exists and that there is no cycle.
                return Err(DocError::Internal("new notebooks wait on each other".into()));
            }
            new = waiting;
        }

        // Moves of existing notebooks. Done one by one, a move can meet a cycle that later moves undo; it waits
        // for them. Some move always goes through while the target has no cycle (the deepest one waiting can).
        let mut moves: Vec<&NotebookState> = notebooks
            .iter()
            .filter(|n| current.states.get(&n.id).is_some_and(|c| c.parent_id != n.parent_id))
            .collect();
        while !moves.is_empty() {
            let before = moves.len();
            let mut waiting = Vec::new();
            for notebook in moves {
                let node = nodes[&notebook.id];
                let parent = notebook.parent_id.as_ref().map(|p| nodes[p]);
                match tree.mov(node, parent) {
                    Ok(()) => {}
                    Err(LoroError::TreeError(LoroTreeError::CyclicMoveError)) => waiting.push(notebook),
                    Err(error) => return Err(internal(error)),
                }
            }
            if waiting.len() == before {
                return Err(DocError::Internal("moves of notebooks wait on each other".into()));
            }
            moves = waiting;
        }

        for notebook in notebooks {
            let meta = tree.get_meta(nodes[&notebook.id]).map_err(internal)?;
            set(&meta, TITLE, notebook.title.as_str().into())?;
            set(&meta, PROTECTED, notebook.protected.into())?;
            set(&meta, GONE, notebook.gone.into())?;
        }
        debug_assert_eq!(self.state(), target.into_values().collect::<Vec<_>>());
        self.replica.doc.commit();
        Ok(())
    }

    /// Every notebook, sorted by id: a pure function of the document's operations, the same on every replica that
    /// has them. Gone notebooks are included (`gone: true`), so every `parent_id` names a notebook of the list.
    pub fn state(&self) -> Vec<NotebookState> {
        self.current().states.into_values().collect()
    }

    /// Whether this document has operations a replica at `version` lacks (nothing new to send when it has not).
    pub fn changed_since(&self, version: &[u8]) -> bool {
        self.replica.has_ops_beyond(version)
    }

    /// The operations this document has (an encoded version vector), for another replica's
    /// [`updates_since`](Self::updates_since).
    pub fn version(&self) -> Vec<u8> {
        self.replica.version()
    }

    /// The operations a replica at `version` lacks (an empty `version`: all of them).
    pub fn updates_since(&self, version: &[u8]) -> Result<Vec<u8>, DocError> {
        self.replica.updates_since("", version)
    }

    /// Imports another replica's [`updates_since`](Self::updates_since) or [`save`](Self::save), in any order and
    /// any number of times. Bytes that are not a notebook tree are refused and change nothing. Only authenticated
    /// bytes: see [the module](super#bytes-to-import).
    pub fn import(&mut self, bytes: &[u8]) -> Result<Imported, DocError> {
        let status = self.replica.import("", bytes)?;
        Ok(Imported {
            pending: status.pending.is_some(),
            clashes: Vec::new(),
            concurrent: false,
            lost_sealed: None,
        })
    }

    fn tree(&self) -> LoroTree {
        self.replica.doc.get_tree(TREE)
    }

    fn current(&self) -> Current {
        let tree = self.tree();
        let alive = tree.get_nodes(false);
        let mut ids: BTreeMap<TreeID, String> = BTreeMap::new();
        let mut nodes: BTreeMap<String, TreeID> = BTreeMap::new();
        for node in &alive {
            let Some(id) = tree.get_meta(node.id).ok().and_then(|meta| map_string(&meta, ID)) else {
                continue;
            };
            if id.is_empty() {
                continue;
            }
            ids.insert(node.id, id.clone());
            // The smallest node id carrying an id is the notebook (`TreeID` orders by peer, then counter).
            nodes
                .entry(id)
                .and_modify(|n| *n = (*n).min(node.id))
                .or_insert(node.id);
        }
        let mut states = BTreeMap::new();
        for node in &alive {
            let Some(id) = ids.get(&node.id) else { continue };
            if nodes.get(id) != Some(&node.id) {
                continue;
            }
            let parent_id = match node.parent {
                TreeParentId::Node(parent) => ids.get(&parent).cloned(),
                _ => None,
            };
            let Ok(meta) = tree.get_meta(node.id) else { continue };
            states.insert(
                id.clone(),
                NotebookState {
                    id: id.clone(),
                    parent_id,
                    title: map_string(&meta, TITLE).unwrap_or_default(),
                    protected: map_bool(&meta, PROTECTED),
                    gone: map_bool(&meta, GONE),
                },
            );
        }
        Current { nodes, states }
    }

    /// The tree as it will be after folding `notebooks` in, checked: ids, parents, no cycle.
    fn target(current: &Current, notebooks: &[NotebookState]) -> Result<BTreeMap<String, NotebookState>, DocError> {
        let mut target = current.states.clone();
        let mut seen = BTreeSet::new();
        for notebook in notebooks {
            if notebook.id.is_empty() {
                return Err(DocError::MissingId("notebook"));
            }
            if notebook.id.len() > MAX_ID_BYTES {
                return Err(DocError::IdTooLong(notebook.id.len(), MAX_ID_BYTES));
            }
            if !seen.insert(notebook.id.as_str()) {
                return Err(DocError::DuplicateNotebook(notebook.id.clone()));
            }
            target.insert(notebook.id.clone(), notebook.clone());
        }
        for notebook in target.values() {
            if let Some(parent) = &notebook.parent_id
                && !target.contains_key(parent)
            {
                return Err(DocError::MissingParent {
                    child: notebook.id.clone(),
                    parent: parent.clone(),
                });
            }
        }
        for start in target.keys() {
            let mut at = start;
            for _ in 0..=target.len() {
                match target.get(at).and_then(|n| n.parent_id.as_ref()) {
                    Some(parent) if parent == start => return Err(DocError::Cycle(start.clone())),
                    Some(parent) => at = parent,
                    None => break,
                }
            }
        }
        Ok(target)
    }
}
