import Foundation

struct TMDBPage<Item: Decodable>: Decodable {
    var page: Int?
    var results: [Item]?
    var total_pages: Int?
    var total_results: Int?
}

struct TMDBGenre: Decodable { var id: Int?; var name: String? }
struct TMDBGenres: Decodable { var genres: [TMDBGenre]? }

struct TMDBMovie: Decodable {
    var id: Int?
    var title: String?
    var overview: String?
    var release_date: String?
    var runtime: Int?
    var genre_ids: [Int]?
    var genres: [TMDBGenre]?
    var vote_average: Double?
    var vote_count: Int?
    var poster_path: String?
    var backdrop_path: String?
    var tagline: String?
    var credits: Credits?
    var videos: Videos?

    struct Credits: Decodable {
        var cast: [Person]?
        var crew: [Person]?
    }
    struct Person: Decodable { var name: String?; var job: String?; var order: Int? }
    struct Videos: Decodable { var results: [Video]? }
    struct Video: Decodable { var key: String?; var site: String?; var type: String?; var name: String?; var official: Bool? }
}

struct TMDBConfiguration: Decodable {
    struct Images: Decodable {
        var secure_base_url: String?
        var base_url: String?
        var poster_sizes: [String]?
        var backdrop_sizes: [String]?
    }
    var images: Images?
}

/// `{"status_code": 34, "status_message": "...", "success": false}`.
struct TMDBStatus: Decodable {
    var success: Bool?
    var status_code: Int?
    var status_message: String?
}
