pub fn panel() {}
