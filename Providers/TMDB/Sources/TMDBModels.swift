import Basics
import FoundationEssentials
import Glibc
import MediaKit

struct TMDBPage<Item: Decodable>: Decodable {
    @Lenient var page: Int?
    @LossyList var results: [Item]?
    @Lenient var total_pages: Int?
    @Lenient var total_results: Int?
}

struct TMDBGenre: Decodable { @Lenient var id: Int?; @Lenient var name: String? }
struct TMDBGenres: Decodable { @LossyList var genres: [TMDBGenre]? }

struct TMDBMovie: Decodable {
    @Lenient var id: Int?
    @Lenient var title: String?
    @Lenient var overview: String?
    @Lenient var release_date: String?
    @Lenient var runtime: Int?
    @LossyList var genre_ids: [Int]?
    @LossyList var genres: [TMDBGenre]?
    @Lenient var vote_average: Double?
    @Lenient var vote_count: Int?
    @Lenient var poster_path: String?
    @Lenient var backdrop_path: String?
    @Lenient var tagline: String?
    @Lenient var credits: Credits?
    @Lenient var videos: Videos?

    struct Credits: Decodable {
        @LossyList var cast: [Person]?
        @LossyList var crew: [Person]?
    }
    struct Person: Decodable { @Lenient var name: String?; @Lenient var job: String?; @Lenient var order: Int? }
    struct Videos: Decodable { @LossyList var results: [Video]? }
    struct Video: Decodable {
        @Lenient var key: String?; @Lenient var site: String?; @Lenient var type: String?; @Lenient var name: String?;
        @Lenient var official: Bool?
    }
}

struct TMDBConfiguration: Decodable {
    struct Images: Decodable {
        @Lenient var secure_base_url: String?
        @Lenient var base_url: String?
        @LossyList var poster_sizes: [String]?
        @LossyList var backdrop_sizes: [String]?
    }
    @Lenient var images: Images?
}

/// `{"status_code": 34, "status_message": "...", "success": false}`.
struct TMDBStatus: Decodable {
    @Lenient var success: Bool?
    @Lenient var status_code: Int?
    @Lenient var status_message: String?
}
