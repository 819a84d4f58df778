// Copyright 2020 The Evcxr Authors.
//
// Licensed under the Apache License, Version 2.0 <LICENSE or
// https://www.apache.org/licenses/LICENSE-2.0> or the MIT license <LICENSE
// or https://opensource.org/licenses/MIT>, at your option. This file may not be
// copied, modified, or distributed except according to those terms.

// This file is both a module of evcxr and is included via include_str! then
// built as a crate itself. The latter is the primary use-case. It's included as
// a submodule only so that constants can be shared.

pub const VARIABLE_CHANGED_TYPE: &str = "EVCXR_VARIABLE_CHANGED_TYPE:";
pub const USER_ERROR_OCCURRED: &str = "EVCXR_ERROR_OCCURRED";

// Patched (bach-kernel): the variables live in a `Vec` sorted by name, found by binary search,
// and every operation on it is a non-generic function. This module is part of every cell's
// crate, and `HashMap<String, Box<dyn Any>>`'s code (about a hundred generic instances:
// hashing, probing, rehashing) was compiled again with each cell's generic calls: about 30 ms
// of a trivial cell's rustc time on a 2-core machine. Only the downcasts stay generic now.
pub struct VariableStore {
    variables: Vec<(String, Box<dyn std::any::Any + 'static>)>,
}

impl VariableStore {
    pub fn new() -> VariableStore {
        VariableStore {
            variables: Vec::new(),
        }
    }

    /// Where `name` is, or where it would go.
    #[inline(never)]
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.variables.binary_search_by(|(n, _)| n.as_str().cmp(name))
    }

    #[inline(never)]
    fn get(&self, name: &str) -> Option<&dyn std::any::Any> {
        self.find(name).ok().map(|i| &*self.variables[i].1)
    }

    #[inline(never)]
    fn insert(&mut self, name: &str, value: Box<dyn std::any::Any>) {
        match self.find(name) {
            Ok(i) => self.variables[i].1 = value,
            Err(i) => self.variables.insert(i, (name.to_owned(), value)),
        }
    }

    #[inline(never)]
    fn remove(&mut self, name: &str) -> Option<Box<dyn std::any::Any>> {
        self.find(name).ok().map(|i| self.variables.remove(i).1)
    }

    pub fn put_variable<T: 'static>(&mut self, name: &str, value: T) {
        self.insert(name, Box::new(value));
    }

    pub fn check_variable<T: 'static>(&mut self, name: &str) -> bool {
        if let Some(v) = self.get(name)
            && v.downcast_ref::<T>().is_none()
        {
            eprintln!("The type of the variable {name} was redefined, so was lost.",);
            println!("{VARIABLE_CHANGED_TYPE}{name}");
            return false;
        }
        true
    }

    /// Patched (bach-kernel): drops a variable whose type the cell redefined (the parent
    /// decided: see `lose_variables_of_redefined_types`), saying so as `check_variable` does.
    pub fn lose_variable(&mut self, name: &str) {
        if self.remove(name).is_some() {
            eprintln!("The type of the variable {name} was redefined, so was lost.");
        }
    }

    pub fn take_variable<T: 'static>(&mut self, name: &str) -> T {
        match self.remove(name) {
            Some(v) => {
                if let Ok(value) = v.downcast() {
                    *value
                } else {
                    // Shouldn't happen so long as check_variable was called.
                    panic!("Variable changed type");
                }
            }
            None => panic!("Variable '{name}' has gone missing"),
        }
    }

    pub fn lazy_arc<T: 'static, F: FnOnce() -> T>(
        &mut self,
        name: &str,
        create: F,
    ) -> std::sync::Arc<T> {
        let i = match self.find(name) {
            Ok(i) => i,
            Err(i) => {
                self.variables.insert(i, (name.to_owned(), Box::new(std::sync::Arc::new(create()))));
                i
            }
        };
        if let Some(value) = self.variables[i].1.downcast_mut::<std::sync::Arc<T>>() {
            std::sync::Arc::clone(value)
        } else {
            panic!("lazy_arc {name} changed type");
        }
    }

    #[inline(never)]
    pub fn merge(&mut self, mut other: VariableStore) {
        for (name, value) in other.variables.drain(..) {
            self.insert(&name, value);
        }
    }
}

pub fn create_variable_store() -> *mut VariableStore {
    Box::into_raw(Box::new(VariableStore::new()))
}
