import Spindle
import SpindleTesting
import XCTest
import SpindleLevelsFixture

/// The specs call no test framework: from XCTest, a passing spec returns
/// and a failing one throws a `SpecFailure`, which fails a throwing test
/// method with its report.
final class SpecsFromXCTestTests: XCTestCase {
    func testAPassingSpecReturnsFromAThrowingTestMethod() throws {
        try ReducerSpec(Reducer(levelsReducer))
            .given(Levels(left: 0, right: 10))
            .when(.increaseLeft)
            .thenState(equals: Levels(left: 1, right: 10))
    }

    func testAFailingSpecThrowsASpecFailure() {
        XCTAssertThrowsError(
            try ReducerSpec(Reducer(wrongLevelsReducer)).given(Levels(left: 0, right: 10)).when(.increaseLeft)
                .thenState(equals: Levels(left: 1, right: 10))
        ) { error in
            XCTAssertTrue(error is SpecFailure)
        }
    }
}
