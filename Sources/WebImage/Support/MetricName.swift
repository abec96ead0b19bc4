/// The names under which the library reports to swift-metrics. Each is stable: dashboards and
/// alerts can rely on it. Dimensions are listed with each name.
public struct MetricName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

}
