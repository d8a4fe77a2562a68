import Testing
@testable import FastMailbox
