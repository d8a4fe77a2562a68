// Allocation gate placeholder; filled in below.
enum AllocationGate {
    static func check(thresholdsPath: String) -> Bool { true }
}
