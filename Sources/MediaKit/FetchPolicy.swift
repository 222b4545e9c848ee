/// How a provider may answer while it is asked on the person's behalf or by a refresh.
public enum FetchPolicy {
    /// True while a refresh reads what is followed: a provider that would answer from the copy it
    /// kept when its service cannot be reached (a feed that fails, a server error) throws instead,
    /// so the refresh reports the failure rather than "nothing new". Set with
    /// `FetchPolicy.$requireFresh.withValue(true) { … }`; tasks started inside inherit it.
    @TaskLocal public static var requireFresh = false
}
