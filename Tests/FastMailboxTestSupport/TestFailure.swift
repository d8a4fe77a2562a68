/// An error a behaviour throws on purpose, to exercise supervision and reporting.
package enum TestFailure: Error, Equatable { case boom, named(String) }

/// An error whose description is "boom", for tests that read it back from a log or a report.
package struct Boom: Error, CustomStringConvertible {
    package init() {}
    package var description: String { "boom" }
}
