extension AtomGraph {
    /// Adds an override for atoms made from now on (an atom in use keeps
    /// its value until it is released).
    func addOverride(_ override: AtomOverride) {
        overrides.add(override)
    }

    /// Adds an observer, told of what happens from now on.
    func addObserver(_ observer: any AtomObserver) {
        observers.append(observer)
    }
}
